/**
 * Every statistic against reference values computed with scipy 1.17.1 (python3); each
 * expected number is pasted next to the call that produced it.
 */
import { sampleCorrelation } from 'simple-statistics';
import { describe, expect, it } from 'vitest';
import { benjaminiHochberg } from '../../src/stats/benjamini-hochberg.js';
import { binomialCdfOf, tQuantileOf, tTwoSidedP, zOf } from '../../src/stats/distributions.js';
import { clusteredStderr, meanAndSd, meanOf, metricSpread, tInterval, wilsonInterval } from '../../src/stats/intervals.js';
import { mcnemarExactP, winTieLoss } from '../../src/stats/mcnemar.js';
import { newcombePairedInterval } from '../../src/stats/newcombe.js';
import { pairedDifference } from '../../src/stats/paired.js';
import { episodesForEffect, minimumDetectableEffect } from '../../src/stats/power.js';

const close = (got: number | null | undefined, want: number, digits = 12) => expect(got).toBeCloseTo(want, digits);

describe('distributions', () => {
  it('match scipy', () => {
    close(tQuantileOf(0.975, 9), 2.262157162798205); // stats.t.ppf(0.975, 9)
    close(tTwoSidedP(-2, 9), 2 * (1 - 0.9617235881146495)); // 2 * (1 - stats.t.cdf(2, 9))
    close(binomialCdfOf(3, 10, 0.5), 0.171875); // stats.binom.cdf(3, 10, 0.5)
    close(zOf(0.975), 1.959963984540054); // stats.norm.ppf(0.975)
  });
});

describe('intervals', () => {
  const x = [0.2, 0.5, 0.9, 1.3, 0.7, 0.4, 1.1, 0.8];

  it('t interval with n−1 df', () => {
    // stats.t.interval(0.95, df=7, loc=x.mean(), scale=stats.sem(x)) → (0.43134377032266613, 1.043656229677334); stats.sem(x) = 0.1294735218380301
    const s = metricSpread(x);
    expect(s.ciMethod).toBe('t');
    close(s.mean, 0.7375);
    close(s.stderr, 0.1294735218380301);
    close(s.ci95![0], 0.43134377032266613);
    close(s.ci95![1], 1.043656229677334);
    expect(tInterval(s.mean, s.stderr, 7)).toEqual(s.ci95);
  });

  it('Wilson for 0/1 values, inside [0, 1] at the edges', () => {
    // stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method='wilson')
    const cases: Array<[number, number, number, number]> = [
      [7, 20, 0.1811918241010821, 0.5671457233147637],
      [0, 10, 0.0, 0.27753279986288926],
      [10, 10, 0.7224672001371109, 1.0],
      [1, 2, 0.09453120573423074, 0.9054687942657693],
    ];
    for (const [k, n, lo, hi] of cases) {
      const [l, h] = wilsonInterval(k, n);
      close(l, lo);
      close(h, hi);
    }
    // All 0 or all 1: the bound at the edge is exactly 0 or 1, not rounding noise.
    expect(wilsonInterval(0, 8)[0]).toBe(0);
    expect(wilsonInterval(8, 8)[1]).toBe(1);
    const s = metricSpread([1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0]);
    expect(s).toMatchObject({ binary: true, ciMethod: 'wilson', count: 20 });
    close(s.ci95![0], 0.1811918241010821);
  });

  it('clustered standard error with C−1 df', () => {
    const v = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.5, 0.25, 0.75, 1.0, 0.0];
    const g = ['a', 'a', 'a', 'b', 'b', 'c', 'c', 'c', 'd', 'd', 'd', 'd'];
    // numpy: s = v.mean(); C = 4; math.sqrt(C/(C-1) * sum(((v[g==c]-s).sum())**2 for c in 'abcd')) / len(v) → 0.04205069936246516
    // stats.t.interval(0.95, df=3, loc=s, scale=se) → (0.40784257384599343, 0.6754907594873398)
    const cl = clusteredStderr(v, g);
    expect(cl.clusters).toBe(4);
    close(cl.se, 0.04205069936246516);
    const s = metricSpread(v, g);
    expect(s).toMatchObject({ ciMethod: 'clustered-t', clusters: 4 });
    close(s.clusteredStderr, 0.04205069936246516);
    close(s.ci95![0], 0.40784257384599343);
    close(s.ci95![1], 0.6754907594873398);
  });

  it('keeps the clustered interval of a rate inside [0, 1]', () => {
    // Five clusters of a 0/1 metric, mostly correct: the clustered t interval reaches past 1.
    const v = [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];
    const g = ['a', 'a', 'a', 'a', 'b', 'b', 'b', 'b', 'c', 'c', 'c', 'c', 'd', 'd', 'd', 'd', 'e', 'e', 'e', 'e'];
    const cl = clusteredStderr(v, g);
    const [, hi] = tInterval(0.8, cl.se, 4);
    expect(hi).toBeGreaterThan(1);
    const s = metricSpread(v, g);
    // On the logit scale instead, inside (0, 1) by construction. p = 0.8, se = 0.2 (statsmodels cluster-robust OLS, 5 clusters):
    // L = log(p/(1−p)); h = stats.t.ppf(0.975, 4)·se/(p(1−p)); expit(L ∓ h) → 0.11063590620348629, 0.9922850525472015
    expect(s).toMatchObject({ binary: true, ciMethod: 'clustered-logit-t', clusters: 5 });
    close(s.ci95![0], 0.11063590620348629);
    close(s.ci95![1], 0.9922850525472015);
    // Values that are not a rate keep the interval as computed.
    const scaled = metricSpread(
      v.map((x) => x * 2),
      g,
    );
    expect(scaled.ci95![1]).toBeGreaterThan(2);
  });

  it('gives a clustered rate at 0 % or 100 % the Wilson interval over its clusters, not a zero-width t', () => {
    // qa_llm, 4 of 4 correct in 2 clusters: the clustered t would be [1, 1].
    const all = metricSpread([1, 1, 1, 1], ['p', 'p', 'q', 'q']);
    expect(all).toMatchObject({ binary: true, ciMethod: 'wilson', clusters: 2, clusteredStderr: 0, ci95: wilsonInterval(2, 2) });
    // stats.binomtest(2, 2).proportion_ci(method='wilson') → (0.3423802275066532, 1.0)
    close(all.ci95![0], 0.34238022750665303);
    expect(all.ci95![1]).toBe(1);
    // Each cluster counts once: wider than Wilson over the episodes, which treats them as independent.
    expect(all.ci95![0]).toBeLessThan(wilsonInterval(4, 4)[0]);
    const none = metricSpread([0, 0, 0, 0, 0, 0], ['a', 'b', 'b', 'c', 'c', 'c']);
    expect(none).toMatchObject({ ciMethod: 'wilson', clusters: 3, ci95: wilsonInterval(0, 3) });
    expect(none.ci95![0]).toBe(0);
    // A metric that is not a rate keeps its zero-width clustered t.
    expect(metricSpread([1, 1, 1, 1], ['p', 'p', 'q', 'q'], { min: 0 })).toMatchObject({ ciMethod: 'clustered-t', ci95: [1, 1] });
  });

  it('falls back to the unclustered interval when values vary but the clusters cancel (a clustered error of 0)', () => {
    // Two clusters whose residuals each sum to 0: the clustered error is 0 however spread the values are.
    const s = metricSpread([0.2, 0.8, 0.2, 0.8], ['p', 'p', 'q', 'q'], { min: 0, max: 1 });
    expect(s).toMatchObject({ ciMethod: 't', clusters: 2 });
    expect(s.clusteredStderr).toBeLessThan(1e-15);
    // The t interval over the 4 episodes, cut to the declared [0, 1].
    expect(s.ci95).toEqual([0, 1]);
    expect(tInterval(0.5, s.stderr, 3)[0]).toBeLessThan(0);
    // A difference of rates whose clusters cancel: the unclustered p, and Newcombe's interval over the 2 clusters (each counted once).
    const d = pairedDifference([0, 0, 0, 0], [0, 1, 0, 1], ['p', 'p', 'q', 'q']);
    expect(d).toMatchObject({ ciMethod: 'newcombe', clusters: 2, df: 3 });
    expect(d.pValue).toBeGreaterThan(0.05);
    expect(d.ci95).toEqual(newcombePairedInterval({ both: 0, gained: 1, lost: 0, neither: 1 }));
    expect(d.ci95![1] - d.ci95![0]).toBeGreaterThan(
      newcombePairedInterval({ both: 0, gained: 2, lost: 0, neither: 2 })![1] -
        newcombePairedInterval({ both: 0, gained: 2, lost: 0, neither: 2 })![0],
    );
  });

  it("keeps an interval inside the metric's declared range", () => {
    // SPL-like values near the top of [0, 1]: the t interval reaches past 1.
    const spl = [1, 1, 0.92, 1, 0.97, 1, 1, 0.88, 1, 1];
    const plain = metricSpread(spl);
    expect(plain.ci95![1]).toBeGreaterThan(1);
    const s = metricSpread(spl, undefined, { min: 0, max: 1 });
    expect(s).toMatchObject({ ciMethod: 't', binary: false });
    expect(s.ci95![0]).toBe(plain.ci95![0]);
    expect(s.ci95![1]).toBe(1);
    // An open bound cuts nothing on its side.
    expect(metricSpread(spl, undefined, { min: 0 }).ci95).toEqual(plain.ci95);
    // A clustered interval is cut the same way.
    const g = ['a', 'a', 'b', 'b', 'c', 'c', 'd', 'd', 'e', 'e'];
    expect(metricSpread(spl, g).ci95![1]).toBeGreaterThan(1);
    expect(metricSpread(spl, g, { min: 0, max: 1 }).ci95![1]).toBe(1);
  });

  it('reads 0/1 values as a rate only when the declared range allows one', () => {
    // A distance of 0 in every episode is not a success rate of 0 %: t (zero width), not Wilson.
    const zeros = [0, 0, 0, 0, 0, 0, 0, 0];
    expect(metricSpread(zeros).ciMethod).toBe('wilson');
    const d = metricSpread(zeros, undefined, { min: 0 });
    expect(d).toMatchObject({ ciMethod: 't', binary: false, ci95: [0, 0] });
    // A count that happened to be 0 or 1 stays a count.
    expect(metricSpread([0, 1, 1, 0, 1], undefined, { min: 0, max: 500 })).toMatchObject({ ciMethod: 't', binary: false });
    // Declared [0, 1] (or narrower): still a rate.
    expect(metricSpread([0, 1, 1, 0, 1], undefined, { min: 0, max: 1 })).toMatchObject({ ciMethod: 'wilson', binary: true });
  });

  it('does not trust a declared range the values break', () => {
    const v = [0.9, 1.2, 1, 0.95, 1.1];
    expect(metricSpread(v, undefined, { min: 0, max: 1 }).ci95).toEqual(metricSpread(v).ci95);
  });

  it('keeps values near the largest double finite: 1e308 in every episode has mean 1e308, not an overflowed sum', () => {
    const huge = [1e308, 1e308, 1e308, 1e308];
    expect(meanAndSd(huge)).toEqual({ mean: 1e308, sd: 0 });
    expect(meanOf(huge)).toBe(1e308);
    const s = metricSpread(huge);
    expect(s).toMatchObject({ mean: 1e308, sd: 0, stderr: 0, ciMethod: 't', ci95: [1e308, 1e308] });
    // With spread: 7.5e307 ± 2.5e307, sd = 2.5e307 · 2/√3.
    const spread = meanAndSd([1e308, 1e308, 5e307, 5e307]);
    expect(spread.mean / 7.5e307).toBeCloseTo(1, 14);
    expect(spread.sd / ((2.5e307 * 2) / Math.sqrt(3))).toBeCloseTo(1, 14);
    // Values of opposite sign whose squares overflow: the sd is rescued the same way.
    expect(meanAndSd([1e200, -1e200]).sd / (Math.SQRT2 * 1e200)).toBeCloseTo(1, 14);
    const cl = metricSpread(huge, ['a', 'a', 'b', 'b']);
    expect(cl).toMatchObject({ mean: 1e308, ciMethod: 'clustered-t', clusteredStderr: 0, ci95: [1e308, 1e308] });
    expect(clusteredStderr([1e308, -1e308, 1e308, -1e308], ['a', 'b', 'c', 'd']).se).toBeGreaterThan(0);
  });

  it('keeps the exact bits of the plain sums for ordinary values', () => {
    let sum = 0;
    for (const v of x) sum += v;
    const mean = sum / x.length;
    let sq = 0;
    for (const v of x) sq += (v - mean) * (v - mean);
    expect(meanAndSd(x)).toEqual({ mean, sd: Math.sqrt(sq / (x.length - 1)) });
    expect(meanOf(x)).toBe(mean);
    // A value that is not finite is not rescued: there is no mean to give.
    expect(meanAndSd([1, Number.POSITIVE_INFINITY]).mean).toBe(Number.POSITIVE_INFINITY);
    expect(Number.isNaN(meanAndSd([]).mean)).toBe(true);
  });

  it('keeps a standard error and an interval bound that are doubles when the sd or the half-width is not', () => {
    // Two values ±1.5e308: sd = 1.5e308 · √2 is beyond a double's range, sd/√2 = 1.5e308 is not.
    const s = metricSpread([1.5e308, -1.5e308]);
    expect(s).toMatchObject({ mean: 0, sd: Number.POSITIVE_INFINITY });
    close(s.stderr / 1.5e308, 1, 14);
    expect(JSON.parse(JSON.stringify(s))).toMatchObject({ sd: null, ci95: [null, null] });
    // 12.7 · 1.5e307 overflows, but 1.7e308 − 12.7 · 1.5e307 is a double.
    const q = tQuantileOf(0.975, 1);
    const [lo, hi] = tInterval(1.7e308, 1.5e307, 1);
    close(lo / ((1.7e307 - q * 1.5e306) * 10), 1, 13);
    expect(hi).toBe(Number.POSITIVE_INFINITY);
    // Ordinary values: mean ± q · se, the plain formula's bits.
    expect(tInterval(0.75, 0.125, 7)).toEqual([0.75 - tQuantileOf(0.975, 7) * 0.125, 0.75 + tQuantileOf(0.975, 7) * 0.125]);
    expect(metricSpread(x).stderr).toBe(meanAndSd(x).sd / Math.sqrt(x.length));
  });

  it('has no interval below two values, and one cluster falls back to the unclustered interval', () => {
    expect(metricSpread([3]).ci95).toBeNull();
    const s = metricSpread(
      x,
      x.map(() => 'only'),
    );
    expect(s.ciMethod).toBe('t');
    expect(s.clusters).toBe(1);
  });
});

describe('paired difference', () => {
  const a = [0.61, 0.48, 0.9, 0.33, 0.75, 0.52, 0.68, 0.41, 0.8, 0.57];
  const b = [0.66, 0.5, 0.97, 0.31, 0.83, 0.6, 0.7, 0.49, 0.86, 0.58];

  it('matches ttest_rel, its interval, Welch and Pearson', () => {
    const d = pairedDifference(a, b);
    // r = stats.ttest_rel(b, a): statistic 4.0249223594996195, pvalue 0.0029957774513988413,
    // r.confidence_interval(0.95) → (0.019708314040975755, 0.0702916859590242); stats.sem(b - a) = 0.011180339887498949
    close(d.meanDiff, 0.04499999999999998);
    close(d.pairedStderr, 0.011180339887498949);
    close(d.pValue, 0.0029957774513988413);
    close(d.ci95![0], 0.019708314040975755);
    close(d.ci95![1], 0.0702916859590242);
    expect(d).toMatchObject({ n: 10, df: 9, ciMethod: 't' });
    // stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95) → (-0.13257194543292247, 0.22257194543292277)
    close(d.unpairedCi95![0], -0.13257194543292247);
    close(d.unpairedCi95![1], 0.22257194543292277);
    // stats.pearsonr(a, b).statistic → 0.9872650389924454
    close(d.correlation, 0.9872650389924454);
    // Pairing is what narrows it.
    expect(d.ci95![1] - d.ci95![0]).toBeLessThan(d.unpairedCi95![1] - d.unpairedCi95![0]);
  });

  it('clusters the differences when episodes carry clusters', () => {
    const g = ['p', 'p', 'q', 'q', 'r', 'r', 's', 's', 't', 't'];
    const d = pairedDifference(a, b, g);
    const diffs = b.map((v, i) => v - a[i]!);
    const cl = clusteredStderr(diffs, g);
    expect(d).toMatchObject({ ciMethod: 'clustered-t', clusters: 5, df: 4 });
    close(d.pairedStderr, cl.se);
  });

  it('keeps the interval of a difference of rates inside [−1, 1] (Newcombe)', () => {
    // Three episodes, two flipped from 0 to 1: t with 2 df reaches past 1; Newcombe's interval does not.
    const d = pairedDifference([0, 0, 1], [1, 1, 1]);
    expect(tInterval(d.meanDiff, d.pairedStderr, 2)[1]).toBeGreaterThan(1);
    expect(d.ciMethod).toBe('newcombe');
    expect(d.ci95).toEqual(newcombePairedInterval({ both: 1, gained: 2, lost: 0, neither: 0 }));
    expect(d.ci95![0]).toBeLessThan(d.meanDiff);
    expect(d.ci95![1]).toBeGreaterThan(d.meanDiff);
    expect(d.ci95![1]).toBeLessThan(1);
  });

  it('gives a difference of rates a width when every pair moved alike, clustered or not', () => {
    // Six of six episodes gained: the t interval over differences of +1 would read [1, 1].
    const d = pairedDifference([0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]);
    expect(d).toMatchObject({ ciMethod: 'newcombe', meanDiff: 1, pairedStderr: 0 });
    expect(d.ci95![0]).toBeLessThan(0.5);
    expect(d.ci95![1]).toBe(1);
    // In 3 clusters the clustered t has no width either: Newcombe over the 3 clusters, wider still.
    const c = pairedDifference([0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1], ['p', 'p', 'q', 'q', 'r', 'r']);
    expect(c).toMatchObject({ ciMethod: 'newcombe', clusters: 3 });
    expect(c.ci95).toEqual(newcombePairedInterval({ both: 0, gained: 3, lost: 0, neither: 0 }));
    expect(c.ci95![0]).toBeLessThan(d.ci95![0]);
    // Clustered rates whose clusters do spread keep the clustered t.
    const k = pairedDifference([0, 0, 0, 0, 1, 0], [1, 1, 0, 0, 1, 1], ['p', 'p', 'q', 'q', 'r', 'r']);
    expect(k.ciMethod).toBe('clustered-t');
  });

  it('cuts the unpaired (Welch) interval of a difference the way the paired one is cut', () => {
    // Rates: the Welch interval of [0, 0, 1] → [1, 1, 1] reaches past 1 (t with 2 df).
    const d = pairedDifference([0, 0, 1], [1, 1, 1]);
    const h = tQuantileOf(0.975, 2) * d.unpairedStderr;
    expect(d.meanDiff + h).toBeGreaterThan(1);
    expect(d.unpairedCi95).toEqual([d.meanDiff - h, 1]);
    // A metric of declared range [0, 10]: within ± its width.
    const b = pairedDifference([0, 0, 9], [10, 10, 10], undefined, { min: 0, max: 10 });
    expect(b.meanDiff + tQuantileOf(0.975, 2) * b.unpairedStderr).toBeGreaterThan(10);
    expect(b.unpairedCi95![1]).toBe(10);
    // Unbounded values keep the interval as computed (and ordinary ones stay as scipy has them, above).
    const u = pairedDifference([0, 0, 9], [10, 10, 10]);
    expect(u.unpairedCi95![1]).toBeGreaterThan(10);
  });

  it('keeps the difference of a bounded metric within its width, and reads 0/1 values by the declared range', () => {
    // Three episodes of a metric in [0, 10]: t with 2 df reaches past 10.
    const d = pairedDifference([0, 0, 9], [10, 10, 10], undefined, { min: 0, max: 10 });
    expect(tInterval(d.meanDiff, d.pairedStderr, 2)[1]).toBeGreaterThan(10);
    expect(d.ci95![1]).toBe(10);
    expect(d.binary).toBe(false);
    // 0/1 values of a count are not rates: no cut to [−1, 1], no McNemar downstream.
    const c = pairedDifference([0, 0, 1], [1, 1, 1], undefined, { min: 0 });
    expect(c.binary).toBe(false);
    expect(c.ci95![1]).toBeGreaterThan(1);
    expect(pairedDifference([0, 0, 1], [1, 1, 1], undefined, { min: 0, max: 1 }).binary).toBe(true);
  });

  it('is well defined for identical runs (no spread)', () => {
    const d = pairedDifference([1, 0, 1], [1, 0, 1]);
    expect(d.meanDiff).toBe(0);
    expect(d.pValue).toBe(1);
    // Three equal pairs of rates do not show that the rates are equal: a width either side of 0.
    expect(d.ci95![0]).toBeCloseTo(-d.ci95![1], 12);
    expect(d.ci95![1]).toBeGreaterThan(0.3);
    // Values that are not rates, equal on every episode: no spread seen, none claimed.
    expect(pairedDifference([2, 5, 7], [2, 5, 7]).ci95).toEqual([0, 0]);
  });

  it('keeps the exact bits of the plain formulas for ordinary values', () => {
    const n = a.length;
    const diffs = b.map((v, i) => v - a[i]!);
    const plain = (v: readonly number[]): { mean: number; sd: number } => {
      let sum = 0;
      for (const x of v) sum += x;
      const mean = sum / v.length;
      let sq = 0;
      for (const x of v) sq += (x - mean) * (x - mean);
      return { mean, sd: Math.sqrt(sq / (v.length - 1)) };
    };
    const d = plain(diffs);
    const se = d.sd / Math.sqrt(n);
    const sa = plain(a).sd;
    const sb = plain(b).sd;
    const unpairedSe = Math.sqrt((sa * sa) / n + (sb * sb) / n);
    const va = (sa * sa) / n;
    const vb = (sb * sb) / n;
    const wdf = (va + vb) ** 2 / ((va * va) / (n - 1) + (vb * vb) / (n - 1));
    const h = tQuantileOf(0.975, wdf) * unpairedSe;
    const got = pairedDifference(a, b);
    expect(got).toMatchObject({ meanDiff: d.mean, diffSd: d.sd, pairedStderr: se, ci95: tInterval(d.mean, se, n - 1) });
    expect(got).toMatchObject({ pValue: tTwoSidedP(d.mean / se, n - 1), correlation: sampleCorrelation(a, b) });
    expect(got).toMatchObject({ unpairedStderr: unpairedSe, unpairedCi95: [d.mean - h, d.mean + h] });
  });

  it('computes a difference of values near the largest double over scaled values where the plain one overflows', () => {
    // One pair 9e307 − (−9e307) = 1.8e308 overflows; the other 11 differ by 1e308. Every statistic of the difference is a double.
    const base = [-9e307, ...new Array<number>(11).fill(-5e307)];
    const cand = base.map((v) => -v);
    const d = pairedDifference(base, cand);
    // In units of 1e308: differences 1.8 and 11 × 1, mean 12.8 / 12.
    const inUnits = (v: number[]) => v.map((x) => x / 1e308);
    const unit = pairedDifference(inUnits(base), inUnits(cand));
    const ratio = (got: number | null | undefined, want: number) => close(got! / (want * 1e308), 1, 14);
    ratio(d.meanDiff, 12.8 / 12);
    ratio(d.diffSd, unit.diffSd);
    ratio(d.pairedStderr, unit.pairedStderr);
    ratio(d.ci95![0], unit.ci95![0]);
    ratio(d.ci95![1], unit.ci95![1]);
    ratio(d.unpairedStderr, unit.unpairedStderr);
    ratio(d.unpairedCi95![1], unit.unpairedCi95![1]);
    close(d.pValue, unit.pValue!);
    close(d.correlation, -1);
    expect(d).toMatchObject({ n: 12, df: 11, ciMethod: 't', baselineMean: meanAndSd(base).mean });
    // Clustered the same way.
    const g = base.map((_, i) => `c${i % 4}`);
    const dc = pairedDifference(base, cand, g);
    ratio(dc.pairedStderr, pairedDifference(inUnits(base), inUnits(cand), g).pairedStderr);
    expect(dc).toMatchObject({ ciMethod: 'clustered-t', clusters: 4, df: 3 });
  });

  it("gives a Welch interval for sds whose squares overflow, though the differences don't", () => {
    const base = [1e200, 3e200, 2e200, 5e200];
    const cand = [1.1e200, 3.2e200, 2e200, 5.5e200];
    const d = pairedDifference(base, cand);
    const unit = pairedDifference(
      base.map((v) => v / 1e200),
      cand.map((v) => v / 1e200),
    );
    close(d.unpairedStderr / (unit.unpairedStderr * 1e200), 1, 14);
    close(d.unpairedCi95![0] / (unit.unpairedCi95![0] * 1e200), 1, 13);
    close(d.correlation, unit.correlation!);
    // The paired part did not overflow: it keeps its plain bits.
    const diffs = cand.map((v, i) => v - base[i]!);
    expect(d.meanDiff).toBe(meanAndSd(diffs).mean);
  });

  it('gives ±Infinity (null in JSON) for a difference beyond what a double holds, never NaN, with the p that still stands', () => {
    const d = pairedDifference([1e308, 1e308, 1e308], [-1e308, -1e308, -1e308]);
    // −2e308 on every pair: the mean is beyond a double's range; the spread is 0, so p is 0.
    expect(d).toMatchObject({ meanDiff: Number.NEGATIVE_INFINITY, diffSd: 0, pairedStderr: 0, pValue: 0, df: 2 });
    expect(d.ci95).toEqual([Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    const json = JSON.parse(JSON.stringify(d));
    expect(json).toMatchObject({
      meanDiff: null,
      ci95: [null, null],
      unpairedCi95: [null, null],
      baselineMean: 1e308,
      candidateMean: -1e308,
    });
    // Opposite extremes that cancel: a finite mean of 0 though every difference is ±2e308.
    const c = pairedDifference([1e308, -1e308, 1e308, -1e308], [-1e308, 1e308, -1e308, 1e308]);
    expect(c.meanDiff).toBe(0);
    expect(c.pValue).toBe(1);
    close(c.correlation, -1);
    for (const v of [c.meanDiff, c.diffSd, c.pairedStderr, c.unpairedStderr, ...c.ci95!, ...c.unpairedCi95!])
      expect(Number.isNaN(v)).toBe(false);
  });
});

describe('McNemar exact', () => {
  it('matches binomtest on the discordant pairs', () => {
    // stats.binomtest(min(b, c), b + c, 0.5).pvalue
    close(mcnemarExactP(3, 11), 0.057373046875);
    close(mcnemarExactP(5, 5), 1.0);
    close(mcnemarExactP(0, 7), 0.015625);
    close(mcnemarExactP(1, 0), 1.0);
    close(mcnemarExactP(12, 30), 0.007915897334896727);
    expect(mcnemarExactP(0, 0)).toBe(1);
  });

  it('counts wins, ties and losses of the candidate', () => {
    expect(winTieLoss([1, 0, 1, 0], [1, 1, 0, 0])).toEqual({ wins: 1, ties: 2, losses: 1 });
  });
});

describe('Benjamini–Hochberg', () => {
  it('matches false_discovery_control', () => {
    const ps = [0.01, 0.04, 0.03, 0.2, 0.5, 0.001, 0.04];
    // stats.false_discovery_control(ps, method='bh')
    const want = [0.035, 0.055999999999999994, 0.055999999999999994, 0.23333333333333336, 0.5, 0.007, 0.055999999999999994];
    const bh = benjaminiHochberg(ps);
    for (const [i, p] of bh.adjusted.entries()) close(p, want[i]!);
    expect(bh.significant).toEqual([true, false, false, false, false, true, false]);
  });

  it('leaves untestable entries out of the count', () => {
    const bh = benjaminiHochberg([0.01, null, 0.04]);
    expect(Number.isNaN(bh.adjusted[1])).toBe(true);
    close(bh.adjusted[2], 0.04);
    expect(bh.significant).toEqual([true, false, true]);
  });
});

describe('power', () => {
  it('minimum detectable effect and episodes needed at α = 0.05, 80 % power', () => {
    // z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8); z * 0.5 / math.sqrt(100) → 0.14007926090564843
    close(minimumDetectableEffect(0.5, 100), 0.14007926090564843);
    // math.ceil((z * 0.5 / 0.05) ** 2) → 785 (784.8879734349086)
    expect(episodesForEffect(0.5, 0.05)).toBe(785);
    expect(episodesForEffect(0.5, -0.05)).toBe(785);
  });

  it('keeps the MDE and episodes needed of a spread near the largest double, where z · sd overflows', () => {
    const z = zOf(0.975) + zOf(0.8);
    // The plain formulas' bits for ordinary spreads.
    expect(minimumDetectableEffect(0.5, 100)).toBe((z * 0.5) / Math.sqrt(100));
    expect(episodesForEffect(0.5, 0.05)).toBe(Math.ceil(((z * 0.5) / 0.05) ** 2));
    close(minimumDetectableEffect(1e308, 100) / (z * 1e307), 1, 14);
    expect(episodesForEffect(1e308, 1e308)).toBe(Math.ceil(z * z));
    // Beyond a double's range it says so: Infinity, never NaN.
    expect(episodesForEffect(1e308, 1e-10)).toBe(Number.POSITIVE_INFINITY);
  });
});
