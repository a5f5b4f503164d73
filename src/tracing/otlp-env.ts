/**
 * Whether this process exports traces, read from the standard OpenTelemetry environment
 * variables: an OTLP/HTTP endpoint for traces (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, used as
 * given, or `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` appended), unless
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. The exporter itself reads the same
 * variables (and `OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT`, `…_COMPRESSION`).
 */

/** The URL spans are posted to, or null when tracing is off. */
export function otlpTracesUrl(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  const exporters = env.OTEL_TRACES_EXPORTER?.split(',').map((s) => s.trim().toLowerCase());
  if (exporters && exporters.length > 0 && exporters.every((e) => e === 'none')) return null;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return null;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}
