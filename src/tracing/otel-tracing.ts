/**
 * The OpenTelemetry SDK behind `Tracing`: a BasicTracerProvider with a BatchSpanProcessor and the
 * OTLP/HTTP (JSON) exporter, which reads the standard `OTEL_EXPORTER_OTLP_*` variables itself.
 * Imported only by `startTracing` when an endpoint is set, so a process without one never loads
 * the SDK. Parents are passed explicitly (no context manager, no global provider), so nothing
 * here changes how the rest of the process runs.
 */
import { performance } from 'node:perf_hooks';
import {
  type Context,
  type DiagLogger,
  diag,
  DiagLogLevel,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type {
  EpisodeOutcomeInfo,
  EpisodeSpan,
  EpisodeSpanInfo,
  FiringInfo,
  NodeEventInfo,
  PhaseSpan,
  RunSpan,
  RunSpanInfo,
  SpanAttributeValue,
  Tracing,
} from './spans.js';
import { formatTraceparent, parseTraceparent } from './traceparent.js';

/** How long shutdown may take to export what is left before the process goes on without it. */
const SHUTDOWN_LIMIT_MS = 5000;
/** Episode statuses that mark an episode span as failed (the rest ended as the graph or budget said). */
const FAILED_EPISODE = new Set(['ERROR', 'CRASHED', 'TIMEOUT', 'INFRA_ERROR']);
const FAILED_RUN = new Set(['FAILED', 'ABORTED']);
/** Endings that can stop an iteration before it finishes. */
const CUT_SHORT = new Set(['TIMEOUT', 'CANCELLED', 'CRASHED']);

/** Attribute names: one `batch_eval.` namespace, like OpenTelemetry's own dotted names. */
export const ATTR = {
  runId: 'batch_eval.run.id',
  graph: 'batch_eval.run.graph',
  episodes: 'batch_eval.run.episode_count',
  workers: 'batch_eval.run.worker_count',
  runSeed: 'batch_eval.run.seed',
  runStatus: 'batch_eval.run.status',
  errorCode: 'batch_eval.error.code',
  index: 'batch_eval.episode.index',
  episodeIndex: 'batch_eval.episode.env_index',
  episodeId: 'batch_eval.episode.id',
  seed: 'batch_eval.episode.seed',
  worker: 'batch_eval.worker.id',
  status: 'batch_eval.episode.status',
  steps: 'batch_eval.episode.steps',
  stepBudget: 'batch_eval.episode.step_budget',
  durationMs: 'batch_eval.episode.duration_ms',
  metric: 'batch_eval.metric.',
  step: 'batch_eval.step',
  nodeId: 'batch_eval.node.id',
  nodeType: 'batch_eval.node.type',
  nodeMs: 'batch_eval.node.duration_ms',
  nodeError: 'batch_eval.node.error',
  // OpenTelemetry's generative-AI conventions for model calls, and what they do not cover.
  genAiOperation: 'gen_ai.operation.name',
  genAiModel: 'gen_ai.request.model',
  genAiInputTokens: 'gen_ai.usage.input_tokens',
  genAiOutputTokens: 'gen_ai.usage.output_tokens',
  genAiFinishReasons: 'gen_ai.response.finish_reasons',
  genAiResponseModel: 'gen_ai.response.model',
  genAiFingerprint: 'gen_ai.openai.response.system_fingerprint',
  llmCached: 'batch_eval.llm.cache_hit',
  llmRetries: 'batch_eval.llm.retries',
  llmLatencyMs: 'batch_eval.llm.latency_ms',
  llmRole: 'batch_eval.llm.role',
} as const;

export interface OtelTracingOptions {
  url: string;
  /** `batch_eval.process` on the resource: which process the spans come from (server, eval). */
  role: string;
  /** `service.version` on the resource. */
  version?: string;
  /** Where the SDK's own warnings and errors go (a failing export). @default nothing */
  log?(line: string): void;
}

/** Wall-clock now in epoch milliseconds with sub-millisecond precision (what span times take). */
const now = (): number => performance.timeOrigin + performance.now();

export class OtelTracing implements Tracing {
  readonly url: string;
  readonly #provider: BasicTracerProvider;
  readonly #tracer: Tracer;
  #closing: Promise<void> | undefined;

  constructor(o: OtelTracingOptions) {
    this.url = o.url;
    if (o.log) diag.setLogger(diagTo(o.log), DiagLogLevel.WARN);
    const resource = defaultResource().merge(
      resourceFromAttributes({
        // OTEL_SERVICE_NAME, when set, wins: defaultResource() read it; this only fills the default.
        [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME || 'batch-eval',
        ...(o.version ? { [ATTR_SERVICE_VERSION]: o.version } : {}),
        'batch_eval.process': o.role,
      }),
    );
    this.#provider = new BasicTracerProvider({
      resource,
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: o.url }), {
          // A run of many short steps makes many spans at once; the default 2048 would drop some.
          maxQueueSize: 65_536,
          maxExportBatchSize: 1024,
          scheduledDelayMillis: 1000,
        }),
      ],
    });
    this.#tracer = this.#provider.getTracer('batch-eval', o.version);
  }

  startRun(info: RunSpanInfo, parent?: string): RunSpan {
    const span = this.#tracer.startSpan('run', { kind: SpanKind.INTERNAL, attributes: runAttributes(info) }, contextOf(parent));
    return new OtelRunSpan(this.#tracer, span, true, info.runId);
  }

  joinRun(info: RunSpanInfo, parent: string): RunSpan {
    const ids = parseTraceparent(parent);
    if (!ids) return this.startRun(info);
    const span = trace.wrapSpanContext({ traceId: ids.traceId, spanId: ids.spanId, traceFlags: ids.flags, isRemote: true });
    return new OtelRunSpan(this.#tracer, span, false, info.runId);
  }

  shutdown(): Promise<void> {
    this.#closing ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_LIMIT_MS);
        timer.unref();
      });
      await Promise.race([this.#provider.shutdown().catch(() => {}), limit]);
      clearTimeout(timer);
    })();
    return this.#closing;
  }
}

class OtelRunSpan implements RunSpan {
  readonly traceparent: string;
  readonly traceId: string;
  readonly #context: Context;
  #ended = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    /** False for another process's span: only its context is used here. */
    private readonly owned: boolean,
    private readonly runId: string,
  ) {
    const sc = span.spanContext();
    this.traceId = sc.traceId;
    this.traceparent = formatTraceparent({ traceId: sc.traceId, spanId: sc.spanId, flags: sc.traceFlags });
    this.#context = trace.setSpan(ROOT_CONTEXT, span);
  }

  phase(name: string, attributes: Record<string, SpanAttributeValue> = {}): PhaseSpan {
    const span = this.tracer.startSpan(name, { attributes: { [ATTR.runId]: this.runId, ...attributes } }, this.#context);
    let ended = false;
    return {
      end(error) {
        if (ended) return;
        ended = true;
        if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
        span.end();
      },
    };
  }

  startEpisode(info: EpisodeSpanInfo): EpisodeSpan {
    const span = this.tracer.startSpan(
      'episode',
      {
        // The clock its step spans and its end take: left to the SDK, the start came from Date.now(),
        // which can run ahead of performance's clock, and a first step then began before its episode.
        startTime: now(),
        attributes: {
          [ATTR.runId]: this.runId,
          [ATTR.index]: info.index,
          [ATTR.episodeIndex]: info.episodeIndex,
          [ATTR.seed]: info.seed,
          [ATTR.worker]: info.workerId,
        },
      },
      this.#context,
    );
    return new OtelEpisodeSpan(this.tracer, span, this.runId, info.index);
  }

  end(status: string, error?: { code: string; message: string } | null): void {
    if (this.#ended || !this.owned) return;
    this.#ended = true;
    this.span.setAttribute(ATTR.runStatus, status);
    if (error) this.span.setAttribute(ATTR.errorCode, error.code);
    if (FAILED_RUN.has(status)) this.span.setStatus({ code: SpanStatusCode.ERROR, message: error?.message ?? status });
    else if (status === 'COMPLETED') this.span.setStatus({ code: SpanStatusCode.OK });
    this.span.end();
  }
}

class OtelEpisodeSpan implements EpisodeSpan {
  readonly #context: Context;
  /** End of the previous step (or the loop's start): where the next step span starts. */
  #stepStart: number | undefined;
  #lastStep = -1;
  #firings: FiringInfo[] = [];
  #modelCalls: NodeEventInfo[] = [];
  #ended = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    private readonly runId: string,
    private readonly index: number,
  ) {
    this.#context = trace.setSpan(ROOT_CONTEXT, span);
  }

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  get spanId(): string {
    return this.span.spanContext().spanId;
  }

  loopStarted(): void {
    this.#stepStart = now();
  }

  firing(entry: FiringInfo): void {
    this.#firings.push(entry);
  }

  event(event: NodeEventInfo): void {
    if (event.type === 'llm_call') this.#modelCalls.push(event);
  }

  stepEnded(step: number): void {
    this.#step(step, now());
  }

  #step(step: number, end: number, error?: string): void {
    const start = this.#stepStart ?? end;
    const span = this.tracer.startSpan(
      'step',
      { startTime: start, attributes: { [ATTR.runId]: this.runId, [ATTR.index]: this.index, [ATTR.step]: step } },
      this.#context,
    );
    for (const f of this.#firings) {
      span.addEvent(
        'node',
        {
          [ATTR.nodeId]: f.nodeId,
          [ATTR.nodeType]: f.type,
          [ATTR.nodeMs]: f.ms,
          ...(f.error !== undefined ? { [ATTR.nodeError]: f.error } : {}),
        },
        end,
      );
    }
    const failed = error ?? this.#firings.find((f) => f.error !== undefined)?.error;
    if (failed !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: failed });
    this.#firings = [];
    if (this.#modelCalls.length > 0) this.#modelCallSpans(span, start, end);
    span.end(end);
    this.#stepStart = end;
    this.#lastStep = step;
  }

  /**
   * One span per model call of the step, under the step span. The call's event has its latency,
   * not its start: the span starts at the step's start and lasts the latency (capped at the step's end).
   */
  #modelCallSpans(step: Span, start: number, end: number): void {
    const parent = trace.setSpan(ROOT_CONTEXT, step);
    for (const e of this.#modelCalls) {
      const model = typeof e.model === 'string' ? e.model : 'unknown';
      const usage = (e.usage ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
      const latency = typeof e.latency_ms === 'number' ? e.latency_ms : 0;
      const attributes: Record<string, SpanAttributeValue> = {
        [ATTR.genAiOperation]: 'chat',
        [ATTR.genAiModel]: model,
        [ATTR.runId]: this.runId,
        [ATTR.index]: this.index,
        [ATTR.nodeId]: e.nodeId,
        [ATTR.llmCached]: e.cached === true,
        [ATTR.llmRetries]: typeof e.retries === 'number' ? e.retries : 0,
        [ATTR.llmLatencyMs]: latency,
      };
      if (typeof usage.prompt_tokens === 'number') attributes[ATTR.genAiInputTokens] = usage.prompt_tokens;
      if (typeof usage.completion_tokens === 'number') attributes[ATTR.genAiOutputTokens] = usage.completion_tokens;
      if (typeof e.finish_reason === 'string') attributes[ATTR.genAiFinishReasons] = [e.finish_reason];
      if (typeof e.reported_model === 'string') attributes[ATTR.genAiResponseModel] = e.reported_model;
      if (typeof e.system_fingerprint === 'string') attributes[ATTR.genAiFingerprint] = e.system_fingerprint;
      if (typeof e.role === 'string') attributes[ATTR.llmRole] = e.role;
      const span = this.tracer.startSpan(`chat ${model}`, { kind: SpanKind.CLIENT, startTime: start, attributes }, parent);
      span.end(Math.min(end, start + latency));
    }
    this.#modelCalls = [];
  }

  end(o: EpisodeOutcomeInfo): void {
    if (this.#ended) return;
    this.#ended = true;
    const t = now();
    // An iteration cut short (timeout, cancel, a dead host) never reported its end: its span ends here.
    if (this.#stepStart !== undefined && (this.#firings.length > 0 || this.#modelCalls.length > 0 || CUT_SHORT.has(o.status))) {
      this.#step(this.#lastStep + 1, t, o.error ?? o.status);
    }
    const attributes: Record<string, SpanAttributeValue> = {
      [ATTR.episodeId]: o.episodeId,
      [ATTR.status]: o.status,
      [ATTR.steps]: o.steps,
      [ATTR.stepBudget]: o.stepBudget,
      [ATTR.durationMs]: o.durationMs,
    };
    for (const [k, v] of Object.entries(o.metrics)) if (typeof v !== 'number' || Number.isFinite(v)) attributes[ATTR.metric + k] = v;
    this.span.setAttributes(attributes);
    if (FAILED_EPISODE.has(o.status)) this.span.setStatus({ code: SpanStatusCode.ERROR, message: o.error ?? o.status });
    else this.span.setStatus({ code: SpanStatusCode.OK });
    this.span.end(t);
  }
}

function runAttributes(info: RunSpanInfo): Record<string, SpanAttributeValue> {
  return {
    [ATTR.runId]: info.runId,
    [ATTR.graph]: info.graph,
    [ATTR.episodes]: info.episodes,
    [ATTR.workers]: info.workers,
    [ATTR.runSeed]: info.seed,
  };
}

function contextOf(parent: string | undefined): Context {
  const ids = parseTraceparent(parent);
  if (!ids) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: ids.traceId, spanId: ids.spanId, traceFlags: ids.flags, isRemote: true });
}

function diagTo(log: (line: string) => void): DiagLogger {
  const write =
    (level: string) =>
    (message: string, ...args: unknown[]) =>
      log(`tracing ${level}: ${[message, ...args.map((a) => (a instanceof Error ? a.message : String(a)))].join(' ')}`);
  const quiet = () => {};
  return { error: write('error'), warn: write('warning'), info: quiet, debug: quiet, verbose: quiet };
}
