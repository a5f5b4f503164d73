/**
 * Run aggregates: per metric mean / count / stderr / min / max / 95 % interval, the same per task, counts by
 * ending and the timeout flag. Always folded in episode-index order, so the result does not
 * depend on which worker finished first.
 */
import type { EpisodeStatus } from '../statuses.js';
import type { MetricRange, MetricRanges } from '../core/types.js';
import { meanOf, metricSpread, tInterval } from '../stats/intervals.js';
import { varianceComponents } from '../stats/variance-components.js';
import { isImputed, missingValue, numericValue, playValue, scoredMetricNames } from './counted-endings.js';
import type { EpisodeRecord, MetricAggregate, RunSummary } from './types.js';

export type Aggregates = Pick<RunSummary, 'aggregateMetrics' | 'aggregateByTask' | 'statusCounts' | 'timedOut'>;

const byIndex = (a: EpisodeRecord, b: EpisodeRecord) => a.index - b.index;

export { numericValue };

/**
 * mean, count, stderr (sample std / sqrt(n); 0 for one value), min, max and the 95 % interval
 * of one metric (t, Wilson for 0/1 values, clustered t when `clusters` name some; inside
 * `range`, the metric's declared range), with the episodes left out of it by ending.
 */
export function summarizeValues(
  name: string,
  values: readonly number[],
  clusters?: readonly (string | undefined)[],
  excluded?: Readonly<Record<string, number>>,
  range?: MetricRange,
): MetricAggregate {
  const n = values.length;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const s = metricSpread(values, clusters, range);
  const out: MetricAggregate = { name, mean: s.mean, count: n, stderr: s.stderr, min, max };
  if (s.ci95) {
    out.ci95Low = s.ci95[0];
    out.ci95High = s.ci95[1];
  }
  out.ciMethod = s.ciMethod;
  out.binary = s.binary;
  if (s.clusters !== undefined) out.clusters = s.clusters;
  if (s.clusteredStderr !== undefined) out.clusteredStderr = s.clusteredStderr;
  out.excluded = { ...(excluded ?? {}) };
  if (range?.goal !== undefined) out.goal = range.goal;
  if (range?.primary) out.primary = true;
  return out;
}

/**
 * The standard error shown beside a metric's interval: the clustered one where the interval is
 * clustered (the SE it was built from), else `stderr` (sd/√n). summary.json keeps `stderr` as
 * sd/√n for every metric, as it always was, and `clusteredStderr` beside it.
 */
export function shownStderr(m: Pick<MetricAggregate, 'stderr' | 'clusteredStderr' | 'ciMethod'>): number {
  const clustered = m.ciMethod === 'clustered-t' || m.ciMethod === 'clustered-logit-t';
  return clustered && typeof m.clusteredStderr === 'number' ? m.clusteredStderr : m.stderr;
}

const finite = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * A metric's 95 % interval: the stored one, else (a summary written before intervals existed)
 * the t interval from its mean, stderr and count. Null below two episodes.
 */
export function ci95Of(m: MetricAggregate): [number, number] | null {
  if (m.count < 2) return null;
  const lo = finite(m.ci95Low);
  const hi = finite(m.ci95High);
  if (lo !== null && hi !== null) return [lo, hi];
  const mean = finite(m.mean);
  const se = finite(m.stderr);
  if (mean === null || se === null) return null;
  return tInterval(mean, se, m.count - 1);
}

/** `counts` with one more play of ending `status`. */
const tally = (counts: Record<string, number>, status: string): void => {
  counts[status] = (counts[status] ?? 0) + 1;
};

/** `aggregate` with its `imputed` tally and value, when any play scored the metric's declared missing value. */
export function withImputed(
  aggregate: MetricAggregate,
  imputed: Readonly<Record<string, number>>,
  declared: MetricRange | undefined,
): MetricAggregate {
  const value = missingValue(declared);
  if (Object.keys(imputed).length > 0 && value !== undefined) {
    aggregate.imputed = { ...imputed };
    aggregate.imputedValue = value;
  }
  return aggregate;
}

/**
 * Aggregates over the numeric and boolean metrics of `records`, metric names sorted. Only
 * counted endings (store/counted-endings.ts) enter a metric; a counted play that did not report
 * it scores the metric's declared `missing` value (tallied in `imputed` by ending), or, with
 * none declared, is left out like every uncounted play (tallied in `excluded` by ending).
 */
export function aggregateMetrics(records: readonly EpisodeRecord[], ranges?: MetricRanges): MetricAggregate[] {
  const sorted = [...records].sort(byIndex);
  if (sorted.some((r) => r.repeat !== undefined)) return aggregateRepeated(sorted, ranges);
  return scoredMetricNames(sorted, ranges).map((name) => {
    const declared = ranges?.[name];
    const values: number[] = [];
    const clusters: (string | undefined)[] = [];
    const excluded: Record<string, number> = {};
    const imputed: Record<string, number> = {};
    for (const r of sorted) {
      const v = playValue(r, name, declared);
      if (v === undefined) {
        tally(excluded, r.status);
        continue;
      }
      if (isImputed(r, name, declared)) tally(imputed, r.status);
      values.push(v);
      clusters.push(r.cluster);
    }
    const out = summarizeValues(name, values, clusters.some((c) => c !== undefined) ? clusters : undefined, excluded, declared);
    return withImputed(out, imputed, declared);
  });
}

/**
 * A run with repeats: per metric, each episode (its episodeId) scores the mean of its counted
 * plays, and mean / stderr / interval are over those episode scores, so `count` is episodes;
 * `repeats`, `betweenVar` and `withinVar` give the variance components. `excluded` still
 * counts plays. `sorted` is in run-index order, hence in episode order.
 */
function aggregateRepeated(sorted: readonly EpisodeRecord[], ranges: MetricRanges | undefined): MetricAggregate[] {
  return scoredMetricNames(sorted, ranges).map((name) => {
    const declared = ranges?.[name];
    const groups = new Map<string, { values: number[]; cluster: string | undefined }>();
    const excluded: Record<string, number> = {};
    const imputed: Record<string, number> = {};
    for (const r of sorted) {
      const v = playValue(r, name, declared);
      if (v === undefined) {
        tally(excluded, r.status);
        continue;
      }
      if (isImputed(r, name, declared)) tally(imputed, r.status);
      let g = groups.get(r.episodeId);
      if (!g) {
        g = { values: [], cluster: r.cluster };
        groups.set(r.episodeId, g);
      }
      g.values.push(v);
    }
    const list = [...groups.values()];
    const means = list.map((g) => meanOf(g.values));
    const clusters = list.map((g) => g.cluster);
    const out = summarizeValues(name, means, clusters.some((c) => c !== undefined) ? clusters : undefined, excluded, declared);
    const vc = varianceComponents(list.map((g) => g.values));
    out.repeats = vc.repeats;
    if (vc.between !== null) out.betweenVar = vc.between;
    if (vc.within !== null) out.withinVar = vc.within;
    return withImputed(out, imputed, declared);
  });
}

/** The task of an episode whose env named none, when others in the run have one. */
export const DEFAULT_TASK = 'default';

/**
 * Aggregates per `task`, tasks sorted. Episodes without a task go under DEFAULT_TASK so that the
 * groups add up to the run; a run where no episode has a task has no groups (one would repeat the run's).
 */
export function aggregateByTask(records: readonly EpisodeRecord[], ranges?: MetricRanges): Record<string, MetricAggregate[]> {
  const groups = new Map<string, EpisodeRecord[]>();
  if (!records.some((r) => r.task !== undefined)) return {};
  for (const r of records) {
    const task = r.task ?? DEFAULT_TASK;
    let g = groups.get(task);
    if (!g) {
      g = [];
      groups.set(task, g);
    }
    g.push(r);
  }
  const out: Record<string, MetricAggregate[]> = {};
  for (const task of [...groups.keys()].sort()) out[task] = aggregateMetrics(groups.get(task)!, ranges);
  return out;
}

export function statusCounts(records: readonly EpisodeRecord[]): Partial<Record<EpisodeStatus, number>> {
  const counts: Partial<Record<EpisodeStatus, number>> = {};
  for (const r of [...records].sort(byIndex)) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/** Every aggregate of a summary over `records`; `ranges` is the run's RunSummary.metricRanges. */
export function computeAggregates(records: readonly EpisodeRecord[], ranges?: MetricRanges): Aggregates {
  return {
    aggregateMetrics: aggregateMetrics(records, ranges),
    aggregateByTask: aggregateByTask(records, ranges),
    statusCounts: statusCounts(records),
    timedOut: records.some((r) => r.status === 'TIMEOUT'),
  };
}
