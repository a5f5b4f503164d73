/** Between/within-episode variance of repeated plays, against scipy's one-way ANOVA. */
import { describe, expect, it } from 'vitest';
import { repeatsAdvice, varianceComponents } from '../../src/stats/variance-components.js';

describe('varianceComponents', () => {
  it('matches the one-way ANOVA mean squares on balanced groups', () => {
    // python3: g=[[3,5,4],[10,12,11],[7,6,9],[2,2,5]]; F,_=scipy.stats.f_oneway(*g)
    //   MSW = mean of per-group var(ddof=1) = 1.8333333333333333; MSB = F·MSW = 39.333333333333364
    //   σ²_between = (MSB − MSW)/K = 12.500000000000009
    const c = varianceComponents([
      [3, 5, 4],
      [10, 12, 11],
      [7, 6, 9],
      [2, 2, 5],
    ]);
    expect(c).toMatchObject({ episodes: 4, plays: 12, repeats: 3 });
    expect(c.within).toBeCloseTo(1.8333333333333333, 12);
    expect(c.between).toBeCloseTo(12.500000000000009, 12);
  });

  it('clips between at 0, has no within without a second play, and skips empty groups', () => {
    expect(
      varianceComponents([
        [0, 1],
        [1, 0],
      ]).between,
    ).toBe(0);
    expect(varianceComponents([[1], [2], [4]])).toMatchObject({ within: null, repeats: 1 });
    expect(varianceComponents([[1, 3], []])).toMatchObject({ episodes: 1, between: null, within: 2 });
  });

  it('keeps components near the largest double finite where their plain sums of squares overflow', () => {
    // Within: (2 · 0.81e308 + 2 · 0.81e308) / 2 plays' df = 1.62e308; the sum 3.24e308 overflows.
    const w = varianceComponents([
      [9e153, -9e153],
      [9e153, -9e153],
    ]);
    expect(w.within! / 1.62e308).toBeCloseTo(1, 14);
    expect(w.between).toBe(0);
    // Between: episode means ±1.1e154, 4 · 1.21e308 / 3 = 1.6133e308; within is 0 and keeps its plain bits.
    const b = varianceComponents([1, -1, 1, -1].map((s) => [s * 1.1e154, s * 1.1e154]));
    expect(b.between! / ((1.21e308 / 3) * 4)).toBeCloseTo(1, 14);
    expect(b.within).toBe(0);
    // 1e308 in every play: no spread at all.
    expect(varianceComponents([[1e308, 1e308], [1e308, 1e308], [1e308]])).toMatchObject({ between: 0, within: 0 });
  });

  it('gives Infinity (null in summary.json) for a variance beyond what a double holds, never NaN', () => {
    const c = varianceComponents([
      [1e308, -1e308],
      [1e308, -1e308],
    ]);
    // Each play is 1e308 from its episode's mean: the variance is 2e616.
    expect(c.within).toBe(Number.POSITIVE_INFINITY);
    expect(c.between).toBe(0);
    expect(JSON.parse(JSON.stringify(c)).within).toBeNull();
    expect(repeatsAdvice({ repeats: 2, between: c.between, within: c.within })).toBeNull();
  });

  it('keeps the exact bits of the plain sums of squares for ordinary values', () => {
    const groups = [[0.1, 0.7, 0.2], [1 / 3, 2 / 3], [12345.678, 1e-9, 3.5, 2.25], [42]];
    const mean = (g: number[]): number => {
      let sum = 0;
      for (const v of g) sum += v;
      return sum / g.length;
    };
    let ss = 0;
    let df = 0;
    let invK = 0;
    for (const g of groups) {
      const m = mean(g);
      for (const v of g) ss += (v - m) * (v - m);
      df += g.length - 1;
      invK += 1 / g.length;
    }
    const means = groups.map(mean);
    const grand = mean(means);
    let sq = 0;
    for (const m of means) sq += (m - grand) * (m - grand);
    const within = ss / df;
    expect(varianceComponents(groups)).toMatchObject({ within, between: Math.max(0, sq / 3 - within * (invK / 4)) });
  });
});

describe('repeatsAdvice', () => {
  it('says more episodes win, with the factor each doubling gives the SE', () => {
    // Var = 1 + 1/1: doubling K gives 1 + 0.5 → SE × sqrt(1.5/2) = 0.87.
    const a = repeatsAdvice({ repeats: 1, between: 1, within: 1 })!;
    expect(a).toContain('more episodes shrink the bar faster');
    expect(a).toContain('×2 episodes → SE ×0.71');
    expect(a).toContain('×2 repeats → SE ×0.87');
    expect(a).toContain('50 %');
  });

  it('calls them equal when all the variance is within episodes, and has nothing to say without components', () => {
    expect(repeatsAdvice({ repeats: 3, between: 0, within: 2 })).toContain('alike');
    expect(repeatsAdvice({ repeats: 3, between: null, within: 2 })).toBeNull();
  });

  it('advises on components near the largest double as on their ratio (their sum overflows)', () => {
    expect(repeatsAdvice({ repeats: 1, between: 1e308, within: 1e308 })).toBe(repeatsAdvice({ repeats: 1, between: 1, within: 1 }));
    expect(repeatsAdvice({ repeats: 3, between: 0, within: 1.7e308 })).toContain('alike');
    expect(repeatsAdvice({ repeats: 2, between: Number.POSITIVE_INFINITY, within: 1 })).toBeNull();
  });
});
