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
});
