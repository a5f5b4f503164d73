/**
 * This process's tracing, started once from the environment (see otlp-env.ts). With no OTLP
 * endpoint configured nothing is loaded: `activeTracing()` stays undefined and every caller
 * skips its spans. The SDK is imported only when an endpoint is set.
 */
import { otlpTracesUrl } from './otlp-env.js';
import type { Tracing } from './spans.js';

export interface StartTracingOptions {
  /** Which process this is, on every span's resource (`batch_eval.process`): server, eval. */
  role: string;
  /** `service.version` on the resource. */
  version?: string;
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Where the SDK's warnings go (an endpoint that refuses the spans). @default nothing */
  log?(line: string): void;
}

let current: Tracing | undefined;
let starting: Promise<Tracing | undefined> | undefined;

/** Starts tracing when an endpoint is configured; resolves with it, or undefined when off. Once per process. */
export function startTracing(opts: StartTracingOptions): Promise<Tracing | undefined> {
  starting ??= (async () => {
    const url = otlpTracesUrl(opts.env ?? process.env);
    if (!url) return undefined;
    const { OtelTracing } = await import('./otel-tracing.js');
    current = new OtelTracing({
      url,
      role: opts.role,
      ...(opts.version ? { version: opts.version } : {}),
      ...(opts.log ? { log: opts.log } : {}),
    });
    return current;
  })();
  return starting;
}

/** The started tracing, or undefined (not configured, not started yet, or shut down). */
export function activeTracing(): Tracing | undefined {
  return current;
}

/** Exports what is buffered and stops; safe to call any number of times, also when tracing never started. */
export async function shutdownTracing(): Promise<void> {
  const t = current ?? (await starting?.catch(() => undefined));
  current = undefined;
  await t?.shutdown().catch(() => {});
}
