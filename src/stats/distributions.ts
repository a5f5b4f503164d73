/**
 * The distributions the statistics use, from @stdlib (kept, tested implementations): no
 * hand-written quantile or tail function anywhere else. They are loaded on first use, from
 * stdlib-dists.cjs: under dist/ the build's one-file bundle of the five packages (~15 ms to
 * load instead of ~100 ms for their ~450 modules), under src/ the same file unbundled.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface StdlibDists {
  binomialCdf(k: number, n: number, p: number): number;
  erfc(x: number): number;
  normalQuantile(p: number, mu: number, sigma: number): number;
  tCdf(x: number, df: number): number;
  tQuantile(p: number, df: number): number;
}

let loaded: StdlibDists | undefined;
const dists = (): StdlibDists => (loaded ??= require('./stdlib-dists.cjs') as StdlibDists);

/** Student's t quantile with `df` degrees of freedom. */
export const tQuantileOf = (p: number, df: number): number => dists().tQuantile(p, df);

/** Two-sided p of a t statistic with `df` degrees of freedom. */
export function tTwoSidedP(t: number, df: number): number {
  if (!Number.isFinite(t)) return Number.isNaN(t) ? Number.NaN : 0;
  return Math.min(1, 2 * dists().tCdf(-Math.abs(t), df));
}

/** P(X ≤ k) for X ~ Binomial(n, p). */
export const binomialCdfOf = (k: number, n: number, p: number): number => dists().binomialCdf(k, n, p);

/** Two-sided p of a standard normal statistic (of a χ² with 1 df, z²): 2Φ(−|z|) = erfc(|z|/√2). */
export function zTwoSidedP(z: number): number {
  if (Number.isNaN(z)) return z;
  return Math.min(1, dists().erfc(Math.abs(z) / Math.SQRT2));
}

/** Standard normal quantile. */
export const zOf = (p: number): number => dists().normalQuantile(p, 0, 1);

/** Loads every distribution now (a process that will need them can do it while it waits for something else). */
export function loadDistributions(): void {
  dists();
}
