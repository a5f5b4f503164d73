/**
 * W3C trace context in a process's environment: the span a child process's spans belong under
 * travels as `TRACEPARENT` (the name OpenTelemetry's environment-carrier convention uses).
 */

/** The environment variable carrying the parent span as a W3C `traceparent`. */
export const TRACEPARENT_ENV = 'TRACEPARENT';

export interface ParentSpanIds {
  traceId: string;
  spanId: string;
  /** W3C trace flags (1 = sampled). */
  flags: number;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** `00-<trace id>-<span id>-<flags>`. */
export function formatTraceparent(p: ParentSpanIds): string {
  return `00-${p.traceId}-${p.spanId}-${p.flags.toString(16).padStart(2, '0')}`;
}

/** The ids of a `traceparent`, or null when it is not one (or names the all-zero ids). */
export function parseTraceparent(value: string | undefined): ParentSpanIds | null {
  const m = value ? TRACEPARENT.exec(value.trim().toLowerCase()) : null;
  if (!m) return null;
  const [, traceId, spanId, flags] = m as unknown as [string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) };
}
