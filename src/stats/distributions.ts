/**
 * The distributions the statistics use, from @stdlib (kept, tested implementations): no
 * hand-written quantile or tail function anywhere else.
 */
import binomialCdf from '@stdlib/stats-base-dists-binomial-cdf';
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import tCdf from '@stdlib/stats-base-dists-t-cdf';
import tQuantile from '@stdlib/stats-base-dists-t-quantile';

/** Student's t quantile with `df` degrees of freedom. */
export const tQuantileOf = (p: number, df: number): number => tQuantile(p, df);

/** Two-sided p of a t statistic with `df` degrees of freedom. */
export function tTwoSidedP(t: number, df: number): number {
  if (!Number.isFinite(t)) return Number.isNaN(t) ? Number.NaN : 0;
  return Math.min(1, 2 * tCdf(-Math.abs(t), df));
}

/** P(X ≤ k) for X ~ Binomial(n, p). */
export const binomialCdfOf = (k: number, n: number, p: number): number => binomialCdf(k, n, p);

/** Standard normal quantile. */
export const zOf = (p: number): number => normalQuantile(p, 0, 1);
