/**
 * The distributions the statistics use, from @stdlib (kept, tested implementations): no
 * hand-written quantile or tail function anywhere else. Each package is required on first use:
 * together they are some hundred small modules, ~140 ms of start-up that a command or an eval
 * process that never computes an interval should not pay.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** `load()` once, on the first call. */
function lazy<F>(load: () => F): () => F {
  let f: F | undefined;
  return () => (f ??= load());
}

const binomialCdf = lazy(() => require('@stdlib/stats-base-dists-binomial-cdf') as (k: number, n: number, p: number) => number);
const normalQuantile = lazy(() => require('@stdlib/stats-base-dists-normal-quantile') as (p: number, mu: number, sigma: number) => number);
const tCdf = lazy(() => require('@stdlib/stats-base-dists-t-cdf') as (x: number, df: number) => number);
const tQuantile = lazy(() => require('@stdlib/stats-base-dists-t-quantile') as (p: number, df: number) => number);

/** Student's t quantile with `df` degrees of freedom. */
export const tQuantileOf = (p: number, df: number): number => tQuantile()(p, df);

/** Two-sided p of a t statistic with `df` degrees of freedom. */
export function tTwoSidedP(t: number, df: number): number {
  if (!Number.isFinite(t)) return Number.isNaN(t) ? Number.NaN : 0;
  return Math.min(1, 2 * tCdf()(-Math.abs(t), df));
}

/** P(X ≤ k) for X ~ Binomial(n, p). */
export const binomialCdfOf = (k: number, n: number, p: number): number => binomialCdf()(k, n, p);

/** Standard normal quantile. */
export const zOf = (p: number): number => normalQuantile()(p, 0, 1);

/** Loads every distribution now (a process that will need them can do it while it waits for something else). */
export function loadDistributions(): void {
  binomialCdf();
  normalQuantile();
  tCdf();
  tQuantile();
}
