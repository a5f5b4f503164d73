/**
 * How an episode's executor callbacks feed its span. Without a span (no tracing) each returns
 * exactly the callback it was given, so an untraced step runs the same code as before tracing
 * existed.
 */
import type { EpisodeEvent, FiringLogEntry } from '../core/types.js';
import type { EpisodeSpan } from '../tracing/spans.js';

/** The firing log callback, also handing each firing to the span. */
export function firingHook(log: (entry: FiringLogEntry) => void, span: EpisodeSpan | undefined): (entry: FiringLogEntry) => void {
  if (!span) return log;
  return (entry) => {
    log(entry);
    span.firing(entry);
  };
}

/** The event log callback, also handing each event to the span (model calls become spans). */
export function eventHook(log: (event: EpisodeEvent) => void, span: EpisodeSpan | undefined): (event: EpisodeEvent) => void {
  if (!span) return log;
  return (event) => {
    log(event);
    span.event(event);
  };
}

/** `{ onStep }` for the executor: the given listener, plus the span's step end; `{}` when neither. */
export function withStepHook<E extends { step: number }>(
  onStep: ((event: E) => void) | undefined,
  span: EpisodeSpan | undefined,
): { onStep?: (event: E) => void } {
  if (!span) return onStep ? { onStep } : {};
  return {
    onStep: (event) => {
      span.stepEnded(event.step);
      onStep?.(event);
    },
  };
}
