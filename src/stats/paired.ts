/**
 * Two runs on the same episodes: the paired difference (candidate − baseline) with its
 * standard error and 95 % interval (clustered when episodes carry a cluster), the correlation
 * of the two, and the unpaired (Welch) interval beside it for contrast.
 */
import { sampleCorrelation } from 'simple-statistics';
import { tQuantileOf, tTwoSidedP } from './distributions.js';
import { newcombePairedInterval, pairedCounts } from './newcombe.js';
import type { MetricRange } from '../core/types.js';
import {
  CONFIDENCE,
  cancelledClusters,
  clusteredStderr,
  heldRange,
  isBinary,
  largestMagnitude,
  mayBeRate,
  meanAndSd,
  tInterval,
  withinRange,
  type CiMethod,
} from './intervals.js';

/** How a paired difference's interval was computed. */
export type DifferenceCiMethod = Exclude<CiMethod, 'wilson' | 'clustered-logit-t'> | 'newcombe';

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
  /**
   * Design effect of the paired mean: pairedStderr² over the unclustered diffSd²/n, never below
   * 1 (clusters that happen to cancel do not make a sample worth more than independent pairs);
   * 1 without clusters, null below two pairs or without spread.
   */
  designEffect: number | null;
  /** The paired t interval, cut to [−1, 1] when `binary`, to [−(max − min), max − min] for a metric of declared range. */
  ci95: [number, number] | null;
  /** 't' or 'clustered-t'; 'newcombe' for a difference of 0/1 rates where the pairs are not clustered, or where the clustered t would have no width. */
  ciMethod: DifferenceCiMethod;
  /** Every value of both sides is 0 or 1 and `range` allows rates: their difference lies in [−1, 1]. */
  binary: boolean;
  /** Degrees of freedom of the paired interval: n−1, or C−1 clustered. */
  df: number;
  clusters?: number;
  /** Two-sided p of the paired t test (clustered when clusters are given). */
  pValue: number | null;
  /** Pearson correlation of the pairs; null when either side is constant. */
  correlation: number | null;
  /** Welch standard error, as if the runs shared no episodes (each side's clustered standard error when clusters are given). */
  unpairedStderr: number;
  /** The Welch interval, cut as `ci95` is. */
  unpairedCi95: [number, number] | null;
}

/** Welch–Satterthwaite degrees of freedom of two independent means with these variances. */
function satterthwaiteDf(a: SideVariance, b: SideVariance): number {
  return (a.v + b.v) ** 2 / ((a.v * a.v) / a.df + (b.v * b.v) / b.df);
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

/** The paired part of a comparison in the unit of the values it is given: the differences' mean and spread, their interval (not yet cut) and p. */
interface PairedPart {
  mean: number;
  sd: number;
  se: number;
  df: number;
  ciMethod: Exclude<CiMethod, 'wilson' | 'clustered-logit-t'>;
  clusters?: number;
  ci95: [number, number] | null;
  pValue: number | null;
}

/** `clusters`: one name per pair (an episode without a cluster named as its own), or undefined. */
function pairedPart(baseline: readonly number[], candidate: readonly number[], clusters: readonly string[] | undefined): PairedPart {
  const n = baseline.length;
  const diffs = new Array<number>(n);
  for (let i = 0; i < n; i++) diffs[i] = candidate[i]! - baseline[i]!;
  const d = meanAndSd(diffs);
  let se = n > 1 ? d.sd / Math.sqrt(n) : Number.NaN;
  let df = n - 1;
  let ciMethod: PairedPart['ciMethod'] = 't';
  let C: number | undefined;
  if (clusters) {
    const cl = clusteredStderr(diffs, clusters);
    C = cl.clusters;
    if (cl.clusters >= 2 && !cancelledClusters(cl.se, se)) {
      se = cl.se;
      df = cl.clusters - 1;
      ciMethod = 'clustered-t';
    }
  }
  const ci95 = df >= 1 && Number.isFinite(se) ? tInterval(d.mean, se, df) : null;
  return { mean: d.mean, sd: d.sd, se, df, ciMethod, ...(C !== undefined ? { clusters: C } : {}), ci95, pValue: pOf(d.mean, se, df) };
}

/** One side's mean as the unpaired contrast sees it: its squared standard error and that estimate's degrees of freedom. */
interface SideVariance {
  v: number;
  df: number;
}

/**
 * One side's variance of the mean: clustered (C/(C−1) · Σ_c r_c² / n², C−1 df) when `clusters`
 * name at least two that do not cancel, else sd²/n with n−1 df.
 */
function sideVariance(values: readonly number[], sd: number, clusters: readonly string[] | undefined): SideVariance {
  const n = values.length;
  const iid = (sd * sd) / n;
  if (clusters) {
    const cl = clusteredStderr(values, clusters);
    if (cl.clusters >= 2 && !cancelledClusters(cl.se, Math.sqrt(iid))) return { v: cl.se * cl.se, df: cl.clusters - 1 };
  }
  return { v: iid, df: n - 1 };
}

/**
 * The unpaired contrast around `meanDiff`, as if the runs shared no episodes: Welch's standard
 * error √(v_A + v_B) with Satterthwaite's degrees of freedom (v_A + v_B)² / (v_A²/df_A + v_B²/df_B).
 * Unclustered that is Welch's interval; with clusters each side's v is its clustered variance
 * of the mean with C−1 df, so the contrast is on the same model as the paired interval.
 */
function unpairedPart(
  meanDiff: number,
  a: { values: readonly number[]; sd: number },
  b: { values: readonly number[]; sd: number },
  clusters: readonly string[] | undefined,
): { se: number; ci95: [number, number] | null } {
  const n = a.values.length;
  if (!(n > 1)) return { se: Number.NaN, ci95: null };
  const va = sideVariance(a.values, a.sd, clusters);
  const vb = sideVariance(b.values, b.sd, clusters);
  const se = Math.sqrt(va.v + vb.v);
  const wdf = se > 0 ? satterthwaiteDf(va, vb) : n - 1;
  const h = tQuantileOf(1 - (1 - CONFIDENCE) / 2, wdf) * se;
  return { se, ci95: [meanDiff - h, meanDiff + h] };
}

/** pairedStderr² / (sd²/n), at least 1; null where either is not a positive finite number. */
function designEffectOf(d: PairedPart, n: number): number | null {
  if (d.ciMethod !== 'clustered-t') return n > 1 ? 1 : null;
  const iid = d.sd / Math.sqrt(n);
  const ratio = (d.se / iid) ** 2;
  return Number.isFinite(ratio) ? Math.max(1, ratio) : null;
}

const finitePair = (ci: [number, number] | null): boolean => ci === null || (Number.isFinite(ci[0]) && Number.isFinite(ci[1]));

/** Whether every statistic of a part that has one came out finite (with finite values, only an overflow makes one infinite or NaN). */
const pairedHeld = (p: PairedPart, n: number): boolean =>
  n === 0 || (Number.isFinite(p.mean) && Number.isFinite(p.sd) && (n < 2 || Number.isFinite(p.se)) && finitePair(p.ci95));
const unpairedHeld = (u: { se: number; ci95: [number, number] | null }, n: number): boolean =>
  n < 2 || (Number.isFinite(u.se) && finitePair(u.ci95));

const times = (ci: [number, number] | null, scale: number): [number, number] | null => (ci ? [ci[0] * scale, ci[1] * scale] : null);

/** Pearson's r of the pairs; null when either side is constant. */
function correlationOf(baseline: readonly number[], candidate: readonly number[], sdA: number, sdB: number): number | null {
  if (!(baseline.length > 1 && sdA > 0 && sdB > 0)) return null;
  const r = sampleCorrelation(baseline as number[], candidate as number[]);
  if (Number.isFinite(r)) return r;
  // The library's sums overflow for values near the largest double. r does not change when a side is divided by a positive number: each side by its own largest magnitude.
  const sa = largestMagnitude(baseline);
  const sb = largestMagnitude(candidate);
  if (!(sa > 0 && Number.isFinite(sa) && sb > 0 && Number.isFinite(sb))) return r;
  return sampleCorrelation(
    baseline.map((v) => v / sa),
    candidate.map((v) => v / sb),
  );
}

/**
 * The interval of a difference of two paired 0/1 rates: Newcombe's, which keeps a width where
 * every pair moved alike (a t interval over 0/±1 differences then has none). Unclustered pairs
 * always; clustered ones only where the clustered t has no width, and then over the clusters'
 * count (each cluster once, as metricSpread's Wilson fallback), since episodes of one cluster
 * are not independent. Null where the clustered t stands.
 */
function rateInterval(baseline: readonly number[], candidate: readonly number[], d: PairedPart): { ci95: [number, number] | null } | null {
  if (d.ciMethod === 'clustered-t' && d.se > 0) return null;
  const counts = pairedCounts(baseline, candidate);
  const clusters = d.clusters !== undefined && d.clusters >= 2 ? d.clusters : baseline.length;
  if (clusters >= baseline.length) return { ci95: newcombePairedInterval(counts) };
  const k = clusters / baseline.length;
  return {
    ci95: newcombePairedInterval({ both: counts.both * k, gained: counts.gained * k, lost: counts.lost * k, neither: counts.neither * k }),
  };
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
  const a = meanAndSd(baseline);
  const b = meanAndSd(candidate);
  const named = clusters?.some((c) => c !== undefined) ? clusters.map((c, i) => c ?? `\u0000episode:${i}`) : undefined;
  let d = pairedPart(baseline, candidate, named);
  let u = unpairedPart(d.mean, { values: baseline, sd: a.sd }, { values: candidate, sd: b.sd }, named);
  if (!pairedHeld(d, n) || !unpairedHeld(u, n)) {
    // Values near the largest double: a difference (1e308 against −1e308), or a sum over the differences or of the sds' squares, overflowed. As in meanAndSd, the part that did is computed over the values divided by their largest magnitude and multiplied back (p, df and the method have no unit); a statistic still beyond a double's range comes back ±Infinity, which the API and JSON give as null. Ordinary values never come here and keep their exact bits.
    const scale = Math.max(largestMagnitude(baseline), largestMagnitude(candidate));
    if (scale > 0 && Number.isFinite(scale)) {
      const bs = baseline.map((v) => v / scale);
      const cs = candidate.map((v) => v / scale);
      const ds = pairedPart(bs, cs, named);
      if (!pairedHeld(d, n)) d = { ...ds, mean: ds.mean * scale, sd: ds.sd * scale, se: ds.se * scale, ci95: times(ds.ci95, scale) };
      if (!unpairedHeld(u, n)) {
        const us = unpairedPart(ds.mean, { values: bs, sd: meanAndSd(bs).sd }, { values: cs, sd: meanAndSd(cs).sd }, named);
        u = { se: us.se * scale, ci95: times(us.ci95, scale) };
      }
    }
  }
  const binary = mayBeRate(range) && isBinary(baseline) && isBinary(candidate);
  const bounds = differenceBounds(baseline, candidate, range, binary);
  const rates = binary && n > 1 ? rateInterval(baseline, candidate, d) : null;
  const ci95 = rates ? rates.ci95 : d.ci95 && bounds ? withinRange(d.ci95, bounds[0], bounds[1]) : d.ci95;
  const unpairedCi95 = u.ci95 && bounds ? withinRange(u.ci95, bounds[0], bounds[1]) : u.ci95;
  return {
    n,
    baselineMean: a.mean,
    candidateMean: b.mean,
    meanDiff: d.mean,
    diffSd: d.sd,
    pairedStderr: d.se,
    designEffect: designEffectOf(d, n),
    ci95,
    ciMethod: rates ? 'newcombe' : d.ciMethod,
    binary,
    df: d.df,
    ...(d.clusters !== undefined ? { clusters: d.clusters } : {}),
    pValue: d.pValue,
    correlation: correlationOf(baseline, candidate, a.sd, b.sd),
    unpairedStderr: u.se,
    unpairedCi95,
  };
}
