import { describe, expect, it } from 'vitest';
import { createPrng } from '../../src/core/prng.js';
import { BettingSequence, BettingTest, bettingInterval } from '../../src/stats/betting-test.js';
import { SequentialTest, sequenceInterval } from '../../src/stats/sequential-test.js';

describe('BettingTest', () => {
  it('grows the capital K_t = ∏ (1 + λ_i (x_i − m)) with the aGRAPA bets of Waudby-Smith & Ramdas (2023), computed by hand', () => {
    // m = 1/2, values 1, 1, 0. Step 1: μ̂ = 1/2 = m, so λ = 0. Step 2: μ̂ = 3/4, σ̂² = (1/4 + 1/16)/2 = 5/32,
    // Kelly (1/4)/(5/32 + 1/16) = 8/7, cut to 0.5/m = 1: K ×= 1 + 1·(1/2). Step 3: μ̂ = 5/6, σ̂² = (1/4 + 1/16 + 1/36)/3,
    // Kelly > 1, cut to 1: K ×= 1 + 1·(−1/2). K = 3/4; the gambler betting on "below" never bets.
    const t = new BettingTest(0.5, 0.05);
    for (const x of [1, 1, 0]) t.push(x);
    expect(t.logCapital.up).toBeCloseTo(Math.log(0.75), 12);
    expect(t.logCapital.down).toBe(0);
    expect(t.decided).toBeNull();
  });

  it('decides once the capital reaches 2/α, and keeps that decision', () => {
    const t = new BettingTest(0.5, 0.05);
    while (t.decided === null) t.push(1);
    // All ones against m = 1/2: every bet after the first is the cap, so K_n = 1.5^(n−1) ≥ 40 first at n = 11.
    expect(t.decided).toEqual({ side: 'above', at: 11 });
    expect(Math.log(1.5) * 10).toBeGreaterThanOrEqual(Math.log(40));
    expect(Math.log(1.5) * 9).toBeLessThan(Math.log(40));
    t.push(0);
    expect(t.decided).toEqual({ side: 'above', at: 11 });
  });

  it('refuses a tested mean outside [0, 1] and an α outside (0, 1)', () => {
    expect(() => new BettingTest(1.5, 0.05)).toThrow(/\[0, 1\]/);
    expect(() => new BettingTest(0.5, 1)).toThrow(/alpha/);
  });
});

describe('the betting confidence sequence', () => {
  it('covers the mean, narrows with n, and agrees with the tests at its bounds', () => {
    const rng = createPrng(7);
    const x = Array.from({ length: 1500 }, () => (rng.next() < 0.3 ? 1 : 0));
    const seq = new BettingSequence(0.05);
    const widths: number[] = [];
    x.forEach((v, i) => {
      seq.push(v);
      if ((i + 1) % 500 === 0) widths.push(seq.interval()[1] - seq.interval()[0]);
    });
    const [lo, hi] = seq.interval();
    expect(lo).toBeLessThan(0.3);
    expect(hi).toBeGreaterThan(0.3);
    expect(widths[1]!).toBeLessThan(widths[0]!);
    expect(widths[2]!).toBeLessThan(widths[1]!);
    // The batch interval narrows the grid's ends by bisection: inside the incremental one, each end rejected by its own test, a hair inside kept.
    const [a, b] = bettingInterval(x, 0.05);
    expect(a).toBeGreaterThanOrEqual(lo);
    expect(b).toBeLessThanOrEqual(hi);
    const decided = (m: number) => {
      const t = new BettingTest(m, 0.05);
      for (const v of x) t.push(v);
      return t.decided?.side ?? null;
    };
    expect(decided(a)).toBe('above');
    expect(decided(b)).toBe('below');
    expect(decided(a + 1e-4)).toBeNull();
    expect(decided(b - 1e-4)).toBeNull();
  });

  it('reads differences in their own range: a −1/0/1 difference maps back from [0, 1]', () => {
    const rng = createPrng(11);
    const diffs = Array.from({ length: 800 }, () => (rng.next() < 0.6 ? 1 : 0) - (rng.next() < 0.4 ? 1 : 0));
    const ci = sequenceInterval(diffs, { alpha: 0.05, bounds: [-1, 1] })!;
    expect(ci[0]).toBeGreaterThan(0);
    expect(ci[1]).toBeLessThan(0.45);
    const test = new SequentialTest([0], { alpha: 0.05, bounds: [-1, 1] });
    for (const d of diffs) test.push(d);
    expect(test.thresholds()[0]!.decided?.side).toBe('above');
    expect(() => new SequentialTest([1], { alpha: 0.05, bounds: [-1, 1] })).toThrow(/outside/);
  });
});
