/**
 * Which plays count in a metric, and what each scores: the one rule every number the platform
 * reports follows (the summary, the report, compare, plan, sweeps, export, the dashboard).
 *
 * Partial results count: a play that timed out, errored, crashed or ran out of steps keeps what
 * it measured, and that is what the agent scored. Two endings are left out, because the play was
 * stopped for reasons outside the agent: a cancel (CANCELLED) and a model provider that kept
 * failing (INFRA_ERROR). A counted play that never produced a metric scores the metric's declared
 * `missing` value (a scorer's 0: an unanswered sample is a wrong one), or is left out of it where
 * the metric declares none (a measurement such as latency). Each metric reports the plays it left
 * out by ending (`excluded`) and those that scored the missing value (`imputed`), so none is
 * dropped or filled in silently.
 */
import type { MetricRange, MetricRanges } from '../core/types.js';
import { UNSCORED_ENDINGS } from '../statuses.js';

const LEFT_OUT: ReadonlySet<string> = new Set(UNSCORED_ENDINGS);

export const isCountedEnding = (status: string): boolean => !LEFT_OUT.has(status);

/** A metric value as a number (booleans as 0/1), or undefined when it is not one. */
export function numericValue(v: unknown): number | undefined {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return undefined;
}

/** What a counted play that never produced a metric declared as `declared` scores; undefined: it is left out. */
export const missingValue = (declared: MetricRange | undefined): number | undefined =>
  typeof declared?.missing === 'number' ? declared.missing : undefined;

/** The plays' shape this rule reads. */
export interface ScoredPlay {
  status: string;
  metrics: Readonly<Record<string, unknown>>;
}

/**
 * The value play `r` scores on metric `name`: what it reported, else (a counted play that never
 * produced it) the metric's declared `missing` value; undefined when the play is left out of it.
 */
export function playValue(r: ScoredPlay, name: string, declared: MetricRange | undefined): number | undefined {
  if (!isCountedEnding(r.status)) return undefined;
  return numericValue(r.metrics[name]) ?? missingValue(declared);
}

/** Whether `playValue` of this play is the declared `missing` value rather than one it reported. */
export const isImputed = (r: ScoredPlay, name: string, declared: MetricRange | undefined): boolean =>
  isCountedEnding(r.status) && numericValue(r.metrics[name]) === undefined && missingValue(declared) !== undefined;

/**
 * The metrics a run scores, in code-unit order: those its counted plays reported, and, once any
 * play counts, every declared metric with a `missing` value, so a scorer that never ran (every
 * play out of budget) still has its line, at its missing value.
 */
export function scoredMetricNames(plays: Iterable<ScoredPlay>, declared: MetricRanges | undefined): string[] {
  const names = new Set<string>();
  let anyCounted = false;
  for (const r of plays) {
    if (!isCountedEnding(r.status)) continue;
    anyCounted = true;
    for (const [name, raw] of Object.entries(r.metrics)) if (numericValue(raw) !== undefined) names.add(name);
  }
  if (anyCounted) for (const [name, d] of Object.entries(declared ?? {})) if (missingValue(d) !== undefined) names.add(name);
  return [...names].sort();
}
