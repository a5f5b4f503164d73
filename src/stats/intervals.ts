/**
 * One metric's spread: mean, standard error and 95 % interval (t with n−1 df; Wilson for 0/1
 * values; clustered t with C−1 df when episodes carry a cluster), kept inside the metric's
 * declared range. Pure and order-fixed: the caller passes values in episode-index order, so
 * equal inputs give bit-identical outputs.
 */
import type { MetricRange } from '../core/types.js';
import { tQuantileOf, zOf } from './distributions.js';

/** The confidence level of every interval the platform reports. */
export const CONFIDENCE = 0.95;

export type CiMethod = 't' | 'wilson' | 'clustered-t' | 'clustered-logit-t';

/** Mean and sample standard deviation (n−1); sd is 0 for one value, NaN for none. */
export function meanAndSd(values: readonly number[]): { mean: number; sd: number } {
  const plain = plainMeanAndSd(values);
  if (Number.isFinite(plain.mean) && Number.isFinite(plain.sd)) return plain;
  // Finite values near the largest double overflow the plain sums: scale them by the largest magnitude (only then, so ordinary values keep their exact bits).
  const scale = largestMagnitude(values);
  if (!(scale > 0 && Number.isFinite(scale))) return plain;
  const scaled = plainMeanAndSd(values.map((v) => v / scale));
  return { mean: scaled.mean * scale, sd: scaled.sd * scale };
}

/** The mean alone, with meanAndSd's sum and its fallback for values whose plain sum overflows. */
export function meanOf(values: readonly number[]): number {
  const n = values.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i]!;
  const mean = sum / n;
  return Number.isFinite(mean) || n === 0 ? mean : meanAndSd(values).mean;
}

function plainMeanAndSd(values: readonly number[]): { mean: number; sd: number } {
  const n = values.length;
  if (n === 0) return { mean: Number.NaN, sd: Number.NaN };
  // Indexed loops: the same sums in the same order as for…of, several times faster before the JIT warms up (a cold comparison).
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i]!;
  const mean = sum / n;
  let sq = 0;
  for (let i = 0; i < n; i++) sq += (values[i]! - mean) * (values[i]! - mean);
  return { mean, sd: n > 1 ? Math.sqrt(sq / (n - 1)) : 0 };
}

/**
 * The largest |v|: 0 for none, NaN when a value is NaN, Infinity when one is infinite. The scale
 * every fallback for values near the largest double divides by (a statistic whose plain sums
 * overflow is computed over values/scale, then multiplied back).
 */
export function largestMagnitude(values: readonly number[]): number {
  let m = 0;
  for (let i = 0; i < values.length; i++) {
    const a = Math.abs(values[i]!);
    if (Number.isNaN(a)) return a;
    if (a > m) m = a;
  }
  return m;
}

/** mean ± t_{0.975, df} · se. */
export function tInterval(mean: number, se: number, df: number): [number, number] {
  const q = tQuantileOf(1 - (1 - CONFIDENCE) / 2, df);
  const h = q * se;
  if (Number.isFinite(h) || !Number.isFinite(se) || !Number.isFinite(mean)) return [mean - h, mean + h];
  // A standard error near the largest double overflows h where a bound may still be a double (1.7e308 − 12.7 · 1.5e307): divide by the quantile first.
  return [(mean / q - se) * q, (mean / q + se) * q];
}

/** `ci` cut to [lo, hi]: the range a rate (or a difference of rates) cannot leave, which a t interval over few values or clusters can reach past. */
export function withinRange(ci: [number, number], lo: number, hi: number): [number, number] {
  return [Math.max(lo, ci[0]), Math.min(hi, ci[1])];
}

/**
 * The clustered interval of a 0/1 rate p (0 < p < 1) with clustered standard error `se`: the
 * clustered t interval on the logit scale, logit(p) ± t_{0.975, df} · se / (p(1 − p)) (the delta
 * method), mapped back. It lies inside (0, 1) by construction, where the t interval on the rate
 * itself reaches past a bound with few clusters.
 */
export function logitClusteredInterval(p: number, se: number, df: number): [number, number] {
  const logit = Math.log(p / (1 - p));
  const h = (tQuantileOf(1 - (1 - CONFIDENCE) / 2, df) * se) / (p * (1 - p));
  const expit = (x: number): number => 1 / (1 + Math.exp(-x));
  return [expit(logit - h), expit(logit + h)];
}

/** Wilson score interval of `successes` out of `n` (stays inside [0, 1], sane at 0 and n). */
export function wilsonInterval(successes: number, n: number): [number, number] {
  const z = zOf(1 - (1 - CONFIDENCE) / 2);
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At 0 or n successes the bound is exactly 0 or 1; the formula leaves rounding noise there.
  return [successes === 0 ? 0 : Math.max(0, centre - half), successes === n ? 1 : Math.min(1, centre + half)];
}

/**
 * Cluster-robust standard error of the mean: sqrt(C/(C−1) · Σ_c (Σ_{i∈c}(s_i − s̄))²) / n.
 * `clusters[i]` is the cluster of `values[i]`. Clusters are summed in first-seen order.
 */
export function clusteredStderr(values: readonly number[], clusters: readonly string[]): { se: number; clusters: number } {
  const plain = plainClusteredStderr(values, clusters);
  if (plain.clusters < 2 || Number.isFinite(plain.se)) return plain;
  // As in meanAndSd: the standard error scales with the values, so huge finite ones are computed scaled.
  const scale = largestMagnitude(values);
  if (!(scale > 0 && Number.isFinite(scale))) return plain;
  const scaled = plainClusteredStderr(
    values.map((v) => v / scale),
    clusters,
  );
  return { se: scaled.se * scale, clusters: scaled.clusters };
}

function plainClusteredStderr(values: readonly number[], clusters: readonly string[]): { se: number; clusters: number } {
  const n = values.length;
  let sum = 0;
  for (const v of values) sum += v;
  const mean = sum / n;
  const residualSums = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const c = clusters[i]!;
    residualSums.set(c, (residualSums.get(c) ?? 0) + (values[i]! - mean));
  }
  const C = residualSums.size;
  if (C < 2) return { se: Number.NaN, clusters: C };
  let sq = 0;
  for (const r of residualSums.values()) sq += r * r;
  return { se: Math.sqrt((C / (C - 1)) * sq) / n, clusters: C };
}

export function isBinary(values: readonly number[]): boolean {
  if (values.length === 0) return false;
  for (let i = 0; i < values.length; i++) if (values[i] !== 0 && values[i] !== 1) return false;
  return true;
}

/**
 * Whether values of a metric with this declared range may be read as a rate when they are all
 * 0 or 1: with no declaration (the values decide), or a range inside [0, 1]. A distance that
 * was 0 in every episode is not a success rate of 0 %.
 */
export function mayBeRate(range: MetricRange | undefined): boolean {
  return range === undefined || (range.min !== undefined && range.max !== undefined && range.min >= 0 && range.max <= 1);
}

/**
 * `range` when every value lies inside it (bounds left out stay open), else undefined: a
 * nodeset whose values break its own declaration gets its plain interval, not one cut to a
 * range its values contradict.
 */
export function heldRange(values: readonly number[], range: MetricRange | undefined): MetricRange | undefined {
  if (range === undefined || (range.min === undefined && range.max === undefined)) return undefined;
  const lo = range.min ?? -Infinity;
  const hi = range.max ?? Infinity;
  for (let i = 0; i < values.length; i++) if (!(values[i]! >= lo && values[i]! <= hi)) return undefined;
  return range;
}

/** The smallest range holding both (an open bound on either side stays open). */
export function coveringRange(a: MetricRange, b: MetricRange): MetricRange {
  const out: MetricRange = {};
  if (a.min !== undefined && b.min !== undefined) out.min = Math.min(a.min, b.min);
  if (a.max !== undefined && b.max !== undefined) out.max = Math.max(a.max, b.max);
  const missing = coveringMissing(a.missing, b.missing);
  if (missing !== undefined) out.missing = missing;
  // Two sources that disagree on which way is better declare no direction.
  if (a.goal !== undefined && (b.goal === undefined || b.goal === a.goal)) out.goal = a.goal;
  else if (a.goal === undefined && b.goal !== undefined) out.goal = b.goal;
  if (a.primary || b.primary) out.primary = true;
  return out;
}

/**
 * The `missing` rule of a metric two sources declare: a number wins over `exclude` or nothing
 * (the metric is a score), and of two numbers the lower (a play that produced neither scores
 * the worse value).
 */
function coveringMissing(a: MetricRange['missing'], b: MetricRange['missing']): MetricRange['missing'] {
  if (typeof a === 'number' && typeof b === 'number') return Math.min(a, b);
  if (typeof a === 'number') return a;
  if (typeof b === 'number') return b;
  return a ?? b;
}

/** `ci` cut to a declared range (an open bound cuts nothing). */
function withinDeclared(ci: [number, number], range: MetricRange | undefined): [number, number] {
  if (range === undefined) return ci;
  return withinRange(ci, range.min ?? -Infinity, range.max ?? Infinity);
}

export interface MetricSpread {
  count: number;
  mean: number;
  /** Sample standard deviation. */
  sd: number;
  /** sd / √n (0 for one value). */
  stderr: number;
  /** Null below two values. */
  ci95: [number, number] | null;
  ciMethod: CiMethod;
  binary: boolean;
  clusters?: number;
  clusteredStderr?: number;
}

/**
 * The spread of one metric. With `clusters` (one per value) and at least two distinct ones,
 * the interval is the clustered t (C−1 df); for 0/1 values the clustered t on the logit scale
 * (inside (0, 1) by construction) — but Wilson over the C clusters when 0/1 values are all 0 or
 * all 1 (the clustered standard error is 0 there); else
 * Wilson for 0/1 values, else t (n−1 df). `range`, the metric's declared range, cuts every interval to it
 * (when the values keep to it), and only a range inside [0, 1] lets 0/1 values be a rate.
 */
/**
 * A clustered standard error that is 0 (to rounding) while the unclustered one is not: a few
 * clusters whose residual sums cancel exactly. It says nothing about the spread, and an interval
 * built on it would claim certainty, so the unclustered interval is used instead.
 */
export const cancelledClusters = (clusteredSe: number, unclusteredSe: number): boolean =>
  unclusteredSe > 0 && clusteredSe <= 1e-9 * unclusteredSe;

/** sd/√n, or — when sd itself is beyond a double's range (two values of ±1.5e308) while sd/√n is not — that of the values scaled by their largest magnitude, multiplied back. */
function stderrOf(values: readonly number[], sd: number): number {
  const n = values.length;
  const se = sd / Math.sqrt(n);
  if (Number.isFinite(se)) return se;
  const scale = largestMagnitude(values);
  if (!(scale > 0 && Number.isFinite(scale))) return se;
  return (meanAndSd(values.map((v) => v / scale)).sd / Math.sqrt(n)) * scale;
}

export function metricSpread(values: readonly number[], clusters?: readonly (string | undefined)[], range?: MetricRange): MetricSpread {
  const n = values.length;
  const { mean, sd } = meanAndSd(values);
  const stderr = n > 1 ? stderrOf(values, sd) : 0;
  const binary = mayBeRate(range) && isBinary(values);
  const held = heldRange(values, range);
  const out: MetricSpread = { count: n, mean, sd, stderr, ci95: null, ciMethod: binary ? 'wilson' : 't', binary };
  if (clusters?.some((c) => c !== undefined)) {
    // An episode without a cluster is its own cluster: it shares nothing with the others.
    const named = clusters.map((c, i) => c ?? `\u0000episode:${i}`);
    const cl = clusteredStderr(values, named);
    out.clusters = cl.clusters;
    if (cl.clusters >= 2) {
      out.clusteredStderr = cl.se;
      if (binary && cl.se === 0 && (mean === 0 || mean === 1)) {
        // Every episode 0 (or 1): the clustered t has zero width. Wilson stays sane there; each cluster counts once (conservative).
        out.ci95 = withinDeclared(wilsonInterval(mean * cl.clusters, cl.clusters), held);
        return out;
      }
      // See cancelledClusters: then the unclustered interval below.
      if (!cancelledClusters(cl.se, stderr)) {
        if (binary) {
          // A rate strictly between 0 and 1 here (0 and 1 took Wilson above): the logit-scale interval, inside (0, 1) by construction.
          out.ciMethod = 'clustered-logit-t';
          out.ci95 = withinDeclared(logitClusteredInterval(mean, cl.se, cl.clusters - 1), held);
          return out;
        }
        out.ciMethod = 'clustered-t';
        out.ci95 = withinDeclared(tInterval(mean, cl.se, cl.clusters - 1), held);
        return out;
      }
    }
  }
  if (n < 2) return out;
  if (binary) out.ci95 = wilsonInterval(Math.round(mean * n), n);
  else out.ci95 = withinDeclared(tInterval(mean, stderr, n - 1), held);
  return out;
}
