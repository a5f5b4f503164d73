/**
 * Run aggregates: per metric mean / count / stderr / min / max, the same per task, counts by
 * ending and the timeout flag. Always folded in episode-index order, so the result does not
 * depend on which worker finished first.
 */
import type { EpisodeStatus } from '../statuses.js';
import type { EpisodeRecord, MetricAggregate, RunSummary } from './types.js';

export type Aggregates = Pick<RunSummary, 'aggregateMetrics' | 'aggregateByTask' | 'statusCounts' | 'timedOut'>;

/**
 * Endings whose metrics are left out of the aggregates: the episode was not allowed to finish
 * (CANCELLED), or the infrastructure failed under it (INFRA_ERROR: not a wrong answer). Both
 * still count in `statusCounts`.
 */
const EXCLUDED_FROM_METRICS: ReadonlySet<EpisodeStatus> = new Set<EpisodeStatus>(['CANCELLED', 'INFRA_ERROR']);

const byIndex = (a: EpisodeRecord, b: EpisodeRecord) => a.index - b.index;

function numericValue(v: unknown): number | undefined {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return undefined;
}

/** mean, count, stderr (sample std / sqrt(n); 0 for one value), min, max of one metric. */
export function summarizeValues(name: string, values: readonly number[]): MetricAggregate {
  const n = values.length;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = sum / n;
  let sq = 0;
  for (const v of values) sq += (v - mean) * (v - mean);
  const stderr = n > 1 ? Math.sqrt(sq / (n - 1)) / Math.sqrt(n) : 0;
  return { name, mean, count: n, stderr, min, max };
}

/** Aggregates over the numeric and boolean metrics of `records`, metric names sorted. */
export function aggregateMetrics(records: readonly EpisodeRecord[]): MetricAggregate[] {
  const columns = new Map<string, number[]>();
  for (const r of [...records].sort(byIndex)) {
    if (EXCLUDED_FROM_METRICS.has(r.status)) continue;
    for (const [name, raw] of Object.entries(r.metrics)) {
      const v = numericValue(raw);
      if (v === undefined) continue;
      let col = columns.get(name);
      if (!col) {
        col = [];
        columns.set(name, col);
      }
      col.push(v);
    }
  }
  return [...columns.keys()].sort().map((name) => summarizeValues(name, columns.get(name)!));
}

/** The task of an episode whose env named none, when others in the run have one. */
export const DEFAULT_TASK = 'default';

/**
 * Aggregates per `task`, tasks sorted. Episodes without a task go under DEFAULT_TASK so that the
 * groups add up to the run; a run where no episode has a task has no groups (one would repeat the run's).
 */
export function aggregateByTask(records: readonly EpisodeRecord[]): Record<string, MetricAggregate[]> {
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
  for (const task of [...groups.keys()].sort()) out[task] = aggregateMetrics(groups.get(task)!);
  return out;
}

export function statusCounts(records: readonly EpisodeRecord[]): Partial<Record<EpisodeStatus, number>> {
  const counts: Partial<Record<EpisodeStatus, number>> = {};
  for (const r of [...records].sort(byIndex)) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

export function computeAggregates(records: readonly EpisodeRecord[]): Aggregates {
  return {
    aggregateMetrics: aggregateMetrics(records),
    aggregateByTask: aggregateByTask(records),
    statusCounts: statusCounts(records),
    timedOut: records.some((r) => r.status === 'TIMEOUT'),
  };
}
