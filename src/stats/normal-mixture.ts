/**
 * The two-sided normal-mixture boundary of Howard, Ramdas, McAuliffe & Sekhon (2021),
 * "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Stat. 49(2), and the
 * asymptotic confidence sequence built on it by Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas
 * (2024), "Time-uniform central limit theory and asymptotic confidence sequences", Ann. Stat.
 * 52(6), Theorem 2.2: mean_t ± σ̂_t · u(t) / t. It needs no bound on the values, and is valid as
 * the count grows (not at every small n): the sequence for metrics with no declared range.
 */

/**
 * u(v) = √((v + ρ) · log((v + ρ) / (ρ α²))) (Howard et al. 2021, eq. (14)): a sub-Gaussian sum S_t
 * with variance process V_t ever reaches |S_t| ≥ u(V_t) with probability at most α.
 */
export function normalMixtureBoundary(v: number, rho: number, alpha: number): number {
  return Math.sqrt((v + rho) * (Math.log1p(v / rho) + 2 * Math.log(1 / alpha)));
}

/**
 * The ρ that makes the boundary narrowest near intrinsic time `vOpt` (Howard et al. 2021, as
 * their confseq library chooses it): vOpt / (2 log(1/α) + log(1 + 2 log(1/α))).
 */
export function bestRho(vOpt: number, alpha: number): number {
  const l = Math.log(1 / alpha);
  return vOpt / (2 * l + Math.log1p(2 * l));
}

/** Episodes at which the asymptotic sequence is narrowest. */
export const ASYMPTOTIC_T_OPT = 200;

/** Values before the asymptotic sequence gives a finite interval: a spread from fewer is too rough for a central-limit boundary. */
export const ASYMPTOTIC_MIN_N = 20;

/**
 * The asymptotic sequence, fed one value at a time in index order. Reads the running
 * intersection of its intervals from ASYMPTOTIC_MIN_N values on ((−∞, ∞) before).
 */
export class AsymptoticSequence {
  private readonly alpha: number;
  private readonly rho: number;
  private t = 0;
  private mean = 0;
  private m2 = 0;
  lower = Number.NEGATIVE_INFINITY;
  upper = Number.POSITIVE_INFINITY;

  constructor(alpha: number, tOpt = ASYMPTOTIC_T_OPT) {
    if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must lie in (0, 1), got ${alpha}`);
    this.alpha = alpha;
    this.rho = bestRho(tOpt, alpha);
  }

  push(value: number): void {
    const t = ++this.t;
    // Welford: a running mean and sum of squares that stay exact-ish for large values.
    const delta = value - this.mean;
    this.mean += delta / t;
    this.m2 += delta * (value - this.mean);
    if (t < ASYMPTOTIC_MIN_N) return;
    const half = (Math.sqrt(this.m2 / (t - 1)) * normalMixtureBoundary(t, this.rho, this.alpha)) / t;
    const lo = Math.max(this.lower, this.mean - half);
    const hi = Math.min(this.upper, this.mean + half);
    // An empty intersection (a miss) keeps the last interval rather than inventing one.
    if (lo <= hi) {
      this.lower = lo;
      this.upper = hi;
    }
  }

  get n(): number {
    return this.t;
  }
}
