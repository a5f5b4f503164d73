/**
 * Two runs on the same episodes: the paired difference (candidate − baseline) with its
 * standard error and 95 % interval (clustered when episodes carry a cluster), the correlation
 * of the two, and the unpaired (Welch) interval beside it for contrast.
 */
import { sampleCorrelation } from 'simple-statistics';
import { tQuantileOf, tTwoSidedP } from './distributions.js';
import type { MetricRange } from '../core/types.js';
import {
  CONFIDENCE,
  cancelledClusters,
  clusteredStderr,
  heldRange,
  isBinary,
  mayBeRate,
  meanAndSd,
  tInterval,
  withinRange,
  type CiMethod,
} from './intervals.js';

export interface PairedDifference {
  /** Pairs compared. */
  n: number;
  baselineMean: number;
  candidateMean: number;
  /** Mean of candidate − baseline. */
  meanDiff: number;
  /** Standard deviation of the per-episode differences (what power planning uses). */
  diffSd: number;
  /** Standard error of meanDiff from the differences (clustered when clusters are given). */
  pairedStderr: number;
  /** The paired t interval, cut to [−1, 1] when `binary`, to [−(max − min), max − min] for a metric of declared range. */
  ci95: [number, number] | null;
  ciMethod: Exclude<CiMethod, 'wilson'>;
  /** Every value of both sides is 0 or 1 and `range` allows rates: their difference lies in [−1, 1]. */
  binary: boolean;
  /** Degrees of freedom of the paired interval: n−1, or C−1 clustered. */
  df: number;
  clusters?: number;
  /** Two-sided p of the paired t test (clustered when clusters are given). */
  pValue: number | null;
  /** Pearson correlation of the pairs; null when either side is constant. */
  correlation: number | null;
  /** Welch standard error, as if the runs shared no episodes. */
  unpairedStderr: number;
  /** The Welch interval, cut as `ci95` is. */
  unpairedCi95: [number, number] | null;
}

/** Welch–Satterthwaite degrees of freedom of two independent means. */
function welchDf(va: number, na: number, vb: number, nb: number): number {
  const a = va / na;
  const b = vb / nb;
  return (a + b) ** 2 / ((a * a) / (na - 1) + (b * b) / (nb - 1));
}

/** What a difference of the metric cannot leave: [−1, 1] for rates, ± the width of a range both sides keep to; null when unbounded. */
function differenceBounds(
  baseline: readonly number[],
  candidate: readonly number[],
  range: MetricRange | undefined,
  binary: boolean,
): [number, number] | null {
  if (binary) return [-1, 1];
  // Two values of a bounded metric differ by at most its width.
  const held = heldRange(baseline, range) && heldRange(candidate, range);
  return held?.min !== undefined && held.max !== undefined ? [held.min - held.max, held.max - held.min] : null;
}

function pOf(mean: number, se: number, df: number): number | null {
  if (!(df >= 1)) return null;
  if (se === 0) return mean === 0 ? 1 : 0;
  return tTwoSidedP(mean / se, df);
}

/**
 * `baseline[i]` and `candidate[i]` are one episode's values in the two runs (index order);
 * `clusters[i]` its cluster, if episodes carry one; `range` the metric's declared range (as in
 * metricSpread: only a range inside [0, 1] lets 0/1 values be rates).
 */
export function pairedDifference(
  baseline: readonly number[],
  candidate: readonly number[],
  clusters?: readonly (string | undefined)[],
  range?: MetricRange,
): PairedDifference {
  const n = baseline.length;
  if (candidate.length !== n) throw new RangeError(`pairedDifference: ${n} baseline values but ${candidate.length} candidate values`);
  const diffs = new Array<number>(n);
  for (let i = 0; i < n; i++) diffs[i] = candidate[i]! - baseline[i]!;
  const a = meanAndSd(baseline);
  const b = meanAndSd(candidate);
  const d = meanAndSd(diffs);
  let se = n > 1 ? d.sd / Math.sqrt(n) : Number.NaN;
  let df = n - 1;
  let ciMethod: PairedDifference['ciMethod'] = 't';
  let C: number | undefined;
  if (clusters?.some((c) => c !== undefined)) {
    const cl = clusteredStderr(
      diffs,
      clusters.map((c, i) => c ?? `\u0000episode:${i}`),
    );
    C = cl.clusters;
    if (cl.clusters >= 2 && !cancelledClusters(cl.se, se)) {
      se = cl.se;
      df = cl.clusters - 1;
      ciMethod = 'clustered-t';
    }
  }
  const binary = mayBeRate(range) && isBinary(baseline) && isBinary(candidate);
  const bounds = differenceBounds(baseline, candidate, range, binary);
  let ci95 = df >= 1 && Number.isFinite(se) ? tInterval(d.mean, se, df) : null;
  if (ci95 && bounds) ci95 = withinRange(ci95, bounds[0], bounds[1]);
  let correlation: number | null = null;
  if (n > 1 && a.sd > 0 && b.sd > 0) correlation = sampleCorrelation(baseline as number[], candidate as number[]);
  const unpairedStderr = n > 1 ? Math.sqrt((a.sd * a.sd) / n + (b.sd * b.sd) / n) : Number.NaN;
  let unpairedCi95: [number, number] | null = null;
  if (n > 1) {
    const wdf = unpairedStderr > 0 ? welchDf(a.sd * a.sd, n, b.sd * b.sd, n) : n - 1;
    const h = tQuantileOf(1 - (1 - CONFIDENCE) / 2, wdf) * unpairedStderr;
    unpairedCi95 = [d.mean - h, d.mean + h];
    if (bounds) unpairedCi95 = withinRange(unpairedCi95, bounds[0], bounds[1]);
  }
  return {
    n,
    baselineMean: a.mean,
    candidateMean: b.mean,
    meanDiff: d.mean,
    diffSd: d.sd,
    pairedStderr: se,
    ci95,
    ciMethod,
    binary,
    df,
    ...(C !== undefined ? { clusters: C } : {}),
    pValue: pOf(d.mean, se, df),
    correlation,
    unpairedStderr,
    unpairedCi95,
  };
}
