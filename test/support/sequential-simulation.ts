/**
 * The simulation that shows the sequential comparison keeps its promises (docs/statistics.md,
 * "Anytime-valid comparisons"): seeded sequences of paired 0/1 outcomes, each watched after
 * every episode up to a budget. Used by test/stats/sequential-simulation.test.ts (a size that
 * runs in seconds) and `npm run bench -- sequential` (the full size).
 */
import { createPrng } from '../../src/core/prng.js';
import { tQuantileOf } from '../../src/stats/distributions.js';
import { episodesForEffect } from '../../src/stats/power.js';
import { SequentialTest } from '../../src/stats/sequential-test.js';

export interface SimulationOptions {
  sequences: number;
  /** Episodes each sequence may run to. */
  budget: number;
  /** Success rates of the baseline and the candidate (independent per episode). */
  baselineRate: number;
  candidateRate: number;
  alpha: number;
  seed: number;
}

export interface SimulationResult {
  /** Share of sequences the anytime-valid test decided "above 0" or "below 0" at some episode. */
  decidedRate: number;
  /** Share decided on the wrong side (below 0 when the candidate is better; any decision when equal). */
  wrongRate: number;
  /** The naive repeated paired t test (95 %, after every episode from the 2nd): share ever "significant". */
  naiveRate: number;
  /** Mean episodes to a decision, the budget for a sequence never decided. */
  meanEpisodes: number;
  /** Episodes of the fixed-n plan (the power plan's formula) at the power the sequential test reached, and at 80 %. */
  fixedAtSamePower: number | null;
  fixedAt80: number | null;
  /** The power used for fixedAtSamePower: the share decided rightly, at most 1 − 1/(2·sequences) so that a share of 1 stays finite. */
  power: number;
}

export function simulate(o: SimulationOptions): SimulationResult {
  const tCrit = new Float64Array(o.budget + 1);
  for (let n = 2; n <= o.budget; n++) tCrit[n] = tQuantileOf(0.975, n - 1);
  let decided = 0;
  let wrong = 0;
  let naive = 0;
  let episodes = 0;
  const effect = o.candidateRate - o.baselineRate;
  for (let s = 0; s < o.sequences; s++) {
    const rng = createPrng(o.seed, s);
    const test = new SequentialTest([0], { alpha: o.alpha, bounds: [-1, 1] });
    let sum = 0;
    let sumSq = 0;
    let naiveHit = false;
    let stoppedAt = o.budget;
    for (let n = 1; n <= o.budget; n++) {
      const d = (rng.next() < o.candidateRate ? 1 : 0) - (rng.next() < o.baselineRate ? 1 : 0);
      sum += d;
      sumSq += d * d;
      if (!naiveHit && n >= 2) {
        const mean = sum / n;
        const variance = (sumSq - n * mean * mean) / (n - 1);
        // A run of identical differences has no spread: the naive test says "significant" whenever their mean is not 0.
        naiveHit = variance > 0 ? Math.abs(mean) / Math.sqrt(variance / n) > tCrit[n]! : mean !== 0;
      }
      const dec = test.thresholds()[0]!.decided;
      if (dec === null) test.push(d);
      const now = test.thresholds()[0]!.decided;
      if (dec === null && now !== null) stoppedAt = n;
      // A/A keeps going to see whether the naive test is fooled; A/B stops once both have answered.
      if (now !== null && (effect !== 0 || naiveHit)) break;
    }
    const dec = test.thresholds()[0]!.decided;
    if (dec) {
      decided++;
      if (effect === 0 || (dec.side === 'above') !== effect > 0) wrong++;
    }
    if (naiveHit) naive++;
    episodes += stoppedAt;
  }
  const sd = Math.sqrt(o.baselineRate * (1 - o.baselineRate) + o.candidateRate * (1 - o.candidateRate));
  const power = Math.min((decided - wrong) / o.sequences, 1 - 1 / (2 * o.sequences));
  return {
    decidedRate: decided / o.sequences,
    wrongRate: wrong / o.sequences,
    naiveRate: naive / o.sequences,
    meanEpisodes: episodes / o.sequences,
    fixedAtSamePower: effect !== 0 && power > 0.5 ? episodesForEffect(sd, effect, o.alpha, power) : null,
    fixedAt80: effect !== 0 ? episodesForEffect(sd, effect, o.alpha, 0.8) : null,
    power,
  };
}
