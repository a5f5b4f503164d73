/**
 * Anytime-valid tests and confidence sequences for the mean of bounded values, by betting
 * (Waudby-Smith & Ramdas 2023, "Estimating means of bounded random variables by betting",
 * JRSS-B 86(1): 1–27). Values are mapped into [0, 1]; to test "the mean is m", a gambler
 * starts with capital 1 and bets on each value in turn, K_t = ∏ (1 + λ_i (x_i − m)), with a bet
 * λ_i chosen from the values before i only. Under the null K is a nonnegative martingale, so by
 * Ville's inequality it ever reaches 2/α with probability at most α/2: one gambler bets the
 * mean is above m, one below, and the test decides the first time either reaches 2/α, however
 * often it is looked at. The bets are the paper's aGRAPA (§5.3): the Kelly-optimal bet
 * (μ̂ − m) / (σ̂² + (μ̂ − m)²) from the regularized mean and variance so far (one prior value at
 * 1/2 with variance 1/4), cut to at most BET_CAP of the largest safe bet. The confidence
 * sequence is the set of m no test has rejected yet (the paper's Theorem 3, one side each).
 */

/** The largest bet, as a share of the bet that could lose everything (the paper uses 1/2 or 3/4). */
const BET_CAP = 0.5;

/** Which way a test decided, once it has: the mean is above m, or below. */
export type BetSide = 'above' | 'below';

/** The test of "the mean of values in [0, 1] is m", fed one value at a time in index order. */
export class BettingTest {
  private readonly m: number;
  private readonly threshold: number;
  private t = 0;
  private sumX = 0;
  private sumResidualSq = 0;
  private logUp = 0;
  private logDown = 0;
  /** The side decided and the value count at which it was, once decided (later values do not change it). */
  decided: { side: BetSide; at: number } | null = null;

  /** `m` in [0, 1]; `alpha` the chance of ever deciding wrongly when the mean is m. */
  constructor(m: number, alpha: number) {
    if (!(m >= 0 && m <= 1)) throw new RangeError(`the tested mean must lie in [0, 1], got ${m}`);
    if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must lie in (0, 1), got ${alpha}`);
    this.m = m;
    this.threshold = Math.log(2 / alpha);
  }

  /** Adds value x ∈ [0, 1]. */
  push(x: number): void {
    const t = ++this.t;
    const m = this.m;
    const mean = (0.5 + this.sumX) / t;
    const variance = (0.25 + this.sumResidualSq) / t;
    const kelly = (mean - m) / (variance + (mean - m) ** 2);
    // A bet up to 1/m (or 1/(1 − m)) could lose everything on one value: keep within BET_CAP of it.
    const up = Math.min(Math.max(kelly, 0), m > 0 ? BET_CAP / m : Number.POSITIVE_INFINITY);
    const down = Math.min(Math.max(-kelly, 0), m < 1 ? BET_CAP / (1 - m) : Number.POSITIVE_INFINITY);
    const gain = x - m;
    if (up > 0) this.logUp += Math.log1p(up * gain);
    if (down > 0) this.logDown += Math.log1p(-down * gain);
    this.sumX += x;
    this.sumResidualSq += (x - (0.5 + this.sumX) / (t + 1)) ** 2;
    if (this.decided === null) {
      if (this.logUp >= this.threshold) this.decided = { side: 'above', at: t };
      else if (this.logDown >= this.threshold) this.decided = { side: 'below', at: t };
    }
  }

  /** The log capitals of the two gamblers (the paper's log K⁺ and log K⁻), for checks. */
  get logCapital(): { up: number; down: number } {
    return { up: this.logUp, down: this.logDown };
  }
}

/** Points tested per unit of [0, 1] by BettingSequence: its bounds are exact to 1/GRID_POINTS of the values' range. */
export const GRID_POINTS = 1000;

/**
 * The betting confidence sequence of values in [0, 1], fed in index order: the hull of the grid
 * points no test has rejected at any count so far, widened by one grid step on each side so
 * that it covers the points between. O(GRID_POINTS) per value.
 */
export class BettingSequence {
  private readonly tests: BettingTest[] = [];
  private readonly points: number;
  private t = 0;
  private sum = 0;

  constructor(alpha: number, points = GRID_POINTS) {
    this.points = points;
    for (let j = 0; j <= points; j++) this.tests.push(new BettingTest(j / points, alpha));
  }

  push(x: number): void {
    this.t++;
    this.sum += x;
    for (const test of this.tests) if (test.decided === null) test.push(x);
  }

  get n(): number {
    return this.t;
  }

  /** [0, 1] before any value. */
  interval(): [number, number] {
    let lo = -1;
    let hi = -1;
    for (let j = 0; j <= this.points; j++) {
      if (this.tests[j]!.decided !== null) continue;
      if (lo < 0) lo = j;
      hi = j;
    }
    // Every grid point rejected (values far from any one: probability ≤ α): the mean's neighbourhood.
    if (lo < 0) lo = hi = Math.round((this.sum / this.t) * this.points);
    return [Math.max(0, (lo - 1) / this.points), Math.min(1, (hi + 1) / this.points)];
  }
}

/** Halvings of the step between a rejected and a kept grid point that bettingInterval makes at each end. */
const REFINE_STEPS = 24;

/**
 * The betting confidence sequence of `x` (values in [0, 1], index order) after the last. Each
 * end is the grid's, then narrowed by bisection between the last rejected grid point and the
 * first kept one, to the rejected side: the end is a point some test rejected, so a bound that
 * decided a requirement lies outside the interval, as the decision says.
 */
export function bettingInterval(x: readonly number[], alpha: number, points = GRID_POINTS): [number, number] {
  const rejected = (m: number): boolean => {
    const test = new BettingTest(m, alpha);
    for (let i = 0; i < x.length && test.decided === null; i++) test.push(x[i]!);
    return test.decided !== null;
  };
  const s = new BettingSequence(alpha, points);
  for (let i = 0; i < x.length; i++) s.push(x[i]!);
  let [lo, hi] = s.interval();
  const step = 1 / points;
  const refine = (out: number, kept: number): number => {
    for (let k = 0; k < REFINE_STEPS; k++) {
      const mid = (out + kept) / 2;
      if (rejected(mid)) out = mid;
      else kept = mid;
    }
    return out;
  };
  // interval() widened each end by a step past a kept point: that point is the rejected one, unless it is 0 or 1.
  if (lo > 0 && !rejected(lo + step) && rejected(lo)) lo = refine(lo, lo + step);
  if (hi < 1 && !rejected(hi - step) && rejected(hi)) hi = refine(hi, hi - step);
  return [lo, hi];
}
