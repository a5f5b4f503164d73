/** Turning episode metrics into chart series: numeric values, running means, histograms. */
import type { MetricAggregate } from '../api/fragments.js';
import { UNSCORED_ENDINGS } from './statuses.js';

/** Metrics a user looks at first, in this order, when a run has them. */
export const HEADLINE_METRICS = ['success', 'spl', 'return', 'distance_to_goal', 'length'];

/**
 * The metrics to show first: the run's primary metric, then those with a declared goal (the
 * server's order), then for runs made before either was declared the usual headline names.
 */
export function headlineMetrics(aggs: MetricAggregate[], max = 3): MetricAggregate[] {
  const declaredRank = (m: MetricAggregate): number => (m.primary ? 0 : m.goal ? 1 : 2);
  const ranked = [...aggs].sort((a, b) => declaredRank(a) - declaredRank(b) || rank(a.name) - rank(b.name));
  return ranked.slice(0, max);
}
const rank = (name: string): number => {
  const i = HEADLINE_METRICS.indexOf(name);
  return i === -1 ? HEADLINE_METRICS.length : i;
};

/**
 * A JSON value the server sends as an object (an episode's metrics, a play record) as
 * name → value; anything but an object (which the server never sends) reads as empty.
 */
export function metricsOf(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** A metric value as a number (booleans count as 0/1), or null when it is not numeric. */
export function numericValue(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
}

/**
 * Names of metrics that are numeric in at least one episode or that the run scores
 * (`aggregates`, in the server's order: the primary metric first, then those with a goal),
 * the run's own order first, then the rest with the usual headline names first.
 */
export function numericMetricNames(episodes: ReadonlyArray<{ metrics: unknown }>, aggregates: MetricAggregate[] = []): string[] {
  const first = headlineMetrics(aggregates, aggregates.length).map((a) => a.name);
  const rest = new Set<string>();
  for (const e of episodes) for (const [k, v] of Object.entries(metricsOf(e.metrics))) if (numericValue(v) != null) rest.add(k);
  for (const n of first) rest.delete(n);
  return [...first, ...[...rest].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))];
}

/**
 * Per-episode values of one metric in index order, with the running mean over them, by the
 * server's rule (src/store/counted-endings.ts): episodes whose ending the run's means leave out
 * (cancelled, infrastructure failures) are left out here too, and a counted episode that never
 * produced the metric scores `missing` (the metric's declared value, MetricAggregate.imputedValue)
 * or, without one, is left out; so the running mean ends at the mean the run reports.
 */
export function metricSeries(
  episodes: ReadonlyArray<{ index: number; metrics: unknown; status?: string }>,
  name: string,
  missing: number | null = null,
): { x: number[]; y: number[]; mean: number[] } {
  const pts: Array<[number, number]> = [];
  for (const e of episodes) {
    if (e.status !== undefined && (UNSCORED_ENDINGS as readonly string[]).includes(e.status)) continue;
    const v = numericValue(metricsOf(e.metrics)[name]) ?? missing;
    if (v != null) pts.push([e.index, v]);
  }
  pts.sort((a, b) => a[0] - b[0]);
  const x: number[] = [];
  const y: number[] = [];
  const mean: number[] = [];
  let sum = 0;
  for (const [i, v] of pts) {
    sum += v;
    x.push(i);
    y.push(v);
    mean.push(sum / x.length);
  }
  return { x, y, mean };
}

export interface Histogram {
  /** Bin centres. */
  centers: number[];
  counts: number[];
  binWidth: number;
  /** True when each bin is one distinct value (e.g. success 0/1). */
  discrete: boolean;
}

export function histogram(values: number[], maxBins = 30): Histogram {
  if (values.length === 0) return { centers: [], counts: [], binWidth: 1, discrete: true };
  const distinct = [...new Set(values)].sort((a, b) => a - b);
  if (distinct.length <= 12 && distinct.every((v) => Number.isInteger(v * 1000))) {
    const counts = distinct.map((d) => values.filter((v) => v === d).length);
    const gaps = distinct.slice(1).map((v, i) => v - distinct[i]!);
    const binWidth = gaps.length ? Math.min(...gaps) : 1;
    return { centers: distinct, counts, binWidth, discrete: true };
  }
  let min = distinct[0]!;
  let max = distinct[distinct.length - 1]!;
  if (min === max) {
    min -= 0.5;
    max += 0.5;
  }
  const bins = Math.max(5, Math.min(maxBins, Math.ceil(Math.sqrt(values.length))));
  const width = (max - min) / bins;
  const counts = new Array<number>(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - min) / width))]! += 1;
  const centers = counts.map((_, i) => min + (i + 0.5) * width);
  return { centers, counts, binWidth: width, discrete: false };
}

/** The standard error shown beside a metric: the clustered one where its interval is clustered (the SE the interval was built from), else sd/√n. */
export function shownStderr(m: Pick<MetricAggregate, 'stderr' | 'clusteredStderr' | 'ciMethod'>): number | null {
  const clustered = m.ciMethod === 'CLUSTERED_T' || m.ciMethod === 'CLUSTERED_LOGIT_T';
  return clustered && m.clusteredStderr != null ? m.clusteredStderr : m.stderr;
}
