/**
 * The sequential comparison's promises, shown by simulation at the full size of the claim
 * (2,000 seeded sequences, watched after every episode, up to 2,000 episodes each): the
 * figures docs/statistics.md prints.
 */
import { describe, expect, it } from 'vitest';
import { createPrng } from '../../src/core/prng.js';
import { SequentialTest } from '../../src/stats/sequential-test.js';
import { simulate } from '../support/sequential-simulation.js';

const SIZE = { sequences: 2000, budget: 2000, alpha: 0.05, seed: 47 };

describe('anytime-valid paired comparison of a 0/1 metric', () => {
  it('A/A: decides wrongly at most α of the time, where the naive repeated t test is fooled most of the time', () => {
    for (const rate of [0.5, 0.9]) {
      const r = simulate({ ...SIZE, baselineRate: rate, candidateRate: rate });
      console.log(`A/A at ${rate}: false decisions ${r.wrongRate} (naive repeated t test ${r.naiveRate})`);
      expect(r.wrongRate).toBeLessThanOrEqual(0.05);
      expect(r.naiveRate).toBeGreaterThan(0.3);
    }
  });

  it('A/B at +0.1: decides rightly, on average in at most 60 % of the episodes of the fixed-n plan at the same power', () => {
    const r = simulate({ ...SIZE, baselineRate: 0.5, candidateRate: 0.6 });
    console.log(
      `A/B 0.5 → 0.6: mean episodes ${r.meanEpisodes}, power ${r.power}; fixed-n at that power ${r.fixedAtSamePower}, at 80 % ${r.fixedAt80}`,
    );
    expect(r.wrongRate).toBe(0);
    expect(r.power).toBeGreaterThan(0.99);
    expect(r.meanEpisodes).toBeLessThanOrEqual(0.6 * r.fixedAtSamePower!);
  });

  it('A/A on an unbounded, skewed metric: the asymptotic sequence decides wrongly at most α of the time too', () => {
    let wrong = 0;
    for (let s = 0; s < SIZE.sequences; s++) {
      const rng = createPrng(SIZE.seed, s);
      const test = new SequentialTest([0], { alpha: SIZE.alpha, bounds: null });
      // Differences of two exponential draws: no bound, heavy right tails on both sides.
      for (let n = 0; n < SIZE.budget && test.thresholds()[0]!.decided === null; n++)
        test.push(Math.log1p(-rng.next()) - Math.log1p(-rng.next()));
      if (test.thresholds()[0]!.decided) wrong++;
    }
    console.log(`A/A, exponential differences, asymptotic sequence: false decisions ${wrong / SIZE.sequences}`);
    expect(wrong / SIZE.sequences).toBeLessThanOrEqual(0.05);
  });

  it('gives the same figures for the same seed', () => {
    const o = { ...SIZE, sequences: 50, baselineRate: 0.5, candidateRate: 0.6 };
    expect(simulate(o)).toEqual(simulate(o));
  });
});
