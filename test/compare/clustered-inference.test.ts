/**
 * Clustered episodes: every number of a comparison row, the run aggregate and the plan against
 * an independent computation (statsmodels 0.15.0 cluster-robust OLS, scipy 1.17.1), from this
 * script (python3), whose output is pasted beside each expectation:
 *
 *   import numpy as np, statsmodels.api as sm
 *   from scipy import stats
 *   from statsmodels.stats.multitest import multipletests
 *   def clustered(y, g):  # mean, cluster-robust SE (G/(G−1) correction), p, df = G−1
 *       r = sm.OLS(np.asarray(y, float), np.ones(len(y))).fit(cov_type='cluster', cov_kwds={'groups': np.asarray(g)}, use_t=True)
 *       return r.params[0], r.bse[0], r.pvalues[0], r.df_resid_inference
 *   n = 80; k = np.arange(n) % 5; i = np.arange(n); cl = np.array(['c%d' % x for x in k])
 *   base = (((i*37 + 11) % 17) < 3 + 2*k).astype(float); cand = np.where(k >= 3, 1.0, base)
 *   bsteps = 10 + 3*k + (i*13) % 7; csteps = bsteps - (k % 3) + (i*5) % 4 - 1.5
 *   for a, b in [(base, cand), (bsteps, csteps)]:
 *       d = b - a; m, se, p, df = clustered(d, cl); iid = d.std(ddof=1)/np.sqrt(n); deff = max(1, (se/iid)**2)
 *       mde = (stats.norm.ppf(0.975)+stats.norm.ppf(0.8)) * np.sqrt(deff) * d.std(ddof=1)/np.sqrt(n)
 *       _, sa, _, dfa = clustered(a, cl); _, sb, _, dfb = clustered(b, cl)
 *       use = sa**2 + sb**2; udf = use**2/(sa**4/dfa + sb**4/dfb); uh = stats.t.ppf(0.975, udf)*np.sqrt(use)
 *       # 0/1 only: Durkalski (2003), D_k = Σ_{i∈k} (b_i − a_i)/n_k (equal n_k here): stats.chi2.sf(D.sum()**2 / (D**2).sum(), 1)
 *   multipletests([durkalski_p, steps_p], method='fdr_bh')
 *   # a clustered rate: L = log(p/(1−p)); h = stats.t.ppf(0.975, df)*se/(p*(1−p)); expit(L ∓ h)
 *   # plan: ceil((z · sd)² · deff / effect²), effect success 0.1, steps −5 % of the baseline's mean
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/compare/compare-runs.js';
import { scoreTable } from '../../src/compare/episode-scores.js';
import { parseEffects, powerPlan } from '../../src/compare/power-plan.js';
import { metricSpread } from '../../src/stats/intervals.js';
import { durkalskiP } from '../../src/stats/mcnemar.js';
import { aggregateMetrics, shownStderr } from '../../src/store/aggregate.js';
import type { EpisodeRecord } from '../../src/store/types.js';
import { scoredRecord } from '../support/scored-run.js';

const close = (got: number | null | undefined, want: number, digits = 12) => expect(got).toBeCloseTo(want, digits);

const rec = (index: number, metrics: Record<string, number>, cluster: string): EpisodeRecord => ({
  ...scoredRecord(index, metrics, `e/${index}`),
  cluster,
});

// The script's dataset: 80 episodes in 5 clusters; the candidate solves every episode of clusters 3 and 4.
const N = 80;
const k = (i: number) => i % 5;
const baseSuccess = (i: number) => ((i * 37 + 11) % 17 < 3 + 2 * k(i) ? 1 : 0);
const candSuccess = (i: number) => (k(i) >= 3 ? 1 : baseSuccess(i));
const baseSteps = (i: number) => 10 + 3 * k(i) + ((i * 13) % 7);
const candSteps = (i: number) => baseSteps(i) - (k(i) % 3) + ((i * 5) % 4) - 1.5;
const records = (success: (i: number) => number, steps: (i: number) => number) =>
  Array.from({ length: N }, (_, i) => rec(i, { success: success(i), steps: steps(i) }, `c${k(i)}`));
const baseRecords = records(baseSuccess, baseSteps);
const candRecords = records(candSuccess, candSteps);
const base = { runId: 'base', scores: scoreTable(baseRecords) };
const cand = { runId: 'cand', scores: scoreTable(candRecords) };

describe('a comparison over clustered episodes', () => {
  const row = compareRuns(base, [cand]).candidates[0]!.metrics;
  const success = row.find((m) => m.metric === 'success')!;
  const steps = row.find((m) => m.metric === 'steps')!;

  it("tests a 0/1 metric with Durkalski's clustered McNemar, not the exact test that treats the 80 pairs as independent", () => {
    // success: 'durkalski': '0.16151331846753808', 'mcnemar_exact': '0.0001220703125'
    expect(success).toMatchObject({ binary: true, testMethod: 'mcnemar-clustered', clusters: 5, wins: 14, losses: 0 });
    close(success.testP, 0.16151331846753808);
    close(success.mcnemarP, 0.16151331846753808);
  });

  it('tests any other metric with the clustered paired t (C − 1 df)', () => {
    // steps: 'mean': '-0.7999999999999999', 'se': '0.37416573867739406', 'p': '0.09930068321372679', 'df': '4.0'
    expect(steps).toMatchObject({ testMethod: 'clustered-t', ciMethod: 'clustered-t', df: 4 });
    close(steps.meanDiff, -0.8);
    close(steps.pairedStderr, 0.37416573867739406);
    close(steps.testP, 0.09930068321372679);
    // success: 'se': '0.10897247358851682', 'p': '0.18356686005527664'
    close(success.pairedStderr, 0.10897247358851682);
    close(success.pValue, 0.18356686005527664);
  });

  it('corrects the clustered p values with Benjamini–Hochberg', () => {
    // bh ['0.16151331846753808', '0.16151331846753808']
    close(success.bhAdjustedP, 0.16151331846753808);
    close(steps.bhAdjustedP, 0.16151331846753808);
    expect([success.bhSignificant, steps.bhSignificant]).toEqual([false, false]);
  });

  it('gives the unpaired contrast from each side’s clustered standard error, with Satterthwaite’s df', () => {
    // success: 'use': '0.1916213714594486', 'ulo': '-0.3062452514834727', 'uhi': '0.6562452514834727'
    close(success.unpairedStderr, 0.1916213714594486);
    close(success.unpairedCi95![0], -0.3062452514834727);
    close(success.unpairedCi95![1], 0.6562452514834727);
    // steps: 'use': '3.069329120508258', 'ulo': '-7.8782245629617185', 'uhi': '6.278224562961719'
    close(steps.unpairedStderr, 3.069329120508258);
    close(steps.unpairedCi95![0], -7.8782245629617185, 11);
    close(steps.unpairedCi95![1], 6.278224562961719, 11);
  });

  it('scales the MDE by the design effect', () => {
    // success: 'deff': '6.497835497835497', 'mde': '0.30529567118679457'; steps: 'deff': '6.110497237569056', 'mde': '1.048257202602907'
    close(success.designEffect, 6.497835497835497);
    close(success.mde, 0.30529567118679457);
    close(steps.designEffect, 6.110497237569056);
    close(steps.mde, 1.048257202602907);
  });

  it("gives a run's clustered 0/1 rate the logit-scale interval and shows the clustered SE beside it", () => {
    const agg = aggregateMetrics(candRecords).find((m) => m.name === 'success')!;
    // cand success 0.575 0.1761125350450671 0.1546473869374926 0.9091390696935341 iid 0.05561793263309728
    expect(agg).toMatchObject({ ciMethod: 'clustered-logit-t', clusters: 5, binary: true });
    close(agg.clusteredStderr, 0.1761125350450671);
    close(agg.ci95Low, 0.1546473869374926);
    close(agg.ci95High, 0.9091390696935341);
    // summary.json's stderr stays sd/√n; what is shown beside the interval is the clustered one.
    close(agg.stderr, 0.05561793263309728);
    close(shownStderr(agg), 0.1761125350450671);
  });

  it('plans in Miller’s form with the design effect, an effect per metric (absolute or relative)', () => {
    const plan = powerPlan(cand, [base], { effects: parseEffects(['success=0.1', 'steps=-5%']) });
    // plan success 0.1 746 0.3823643964146892; plan steps -0.9512499999999999 98 1.3538505797927125
    const ps = plan.metrics.find((m) => m.metric === 'success')!;
    const pt = plan.metrics.find((m) => m.metric === 'steps')!;
    expect(ps).toMatchObject({ referenceRunId: 'base', n: 80, clusters: 5, effect: 0.1, episodesNeeded: 746 });
    close(ps.sd, 0.3823643964146892);
    close(ps.designEffect, 6.497835497835497);
    close(ps.mde, success.mde!);
    expect(pt).toMatchObject({ referenceRunId: 'base', relativeEffect: -0.05, episodesNeeded: 98 });
    close(pt.effect, -0.95125);
  });
});

describe('the reference of a plan', () => {
  it('is chosen per metric: the run sharing the most episodes with a difference, named in each row', () => {
    const few = { runId: 'few', scores: scoreTable(records(candSuccess, baseSteps).slice(0, 12)) };
    // `few` is newer (first) but shares 12 episodes, and none of them differs in success.
    const plan = powerPlan(cand, [few, base], {});
    expect(plan.metrics.map((m) => [m.metric, m.referenceRunId])).toEqual([
      ['steps', 'base'],
      ['success', 'base'],
    ]);
    const pinned = powerPlan(cand, [few], { pinned: true });
    expect(pinned.metrics.map((m) => [m.metric, m.referenceRunId, m.n])).toEqual([
      ['steps', 'few', 12],
      ['success', 'few', 12],
    ]);
  });

  it('refuses an effect that is not a non-zero number', () => {
    for (const bad of ['0', 'success=', 'success=%', '=0.1', 'x=abc', 'steps=0%'])
      expect(() => parseEffects([bad]), bad).toThrow(/--effect/);
    expect(parseEffects(['0.05', 'steps=-2', 'success=5%'])).toEqual({
      '*': { value: 0.05, relative: false },
      steps: { value: -2, relative: false },
      success: { value: 0.05, relative: true },
    });
  });
});

describe('a clustered 0/1 rate', () => {
  it('reads 16 of 80 in 5 clusters inside (0, 1) where the clustered t on the rate reached below 0', () => {
    // Clusters of 16: 0, 0, 0, 4 and 12 successes.
    const values = Array.from({ length: 80 }, (_, i) => (i >= 48 && (i < 52 || i >= 68) ? 1 : 0));
    const clusters = Array.from({ length: 80 }, (_, i) => `c${Math.floor(i / 16)}`);
    const s = metricSpread(values, clusters);
    // v as above, g = i // 16: clustered(v, g) → se 0.14577379737113247; 0.2 ∓ stats.t.ppf(.975, 4)·se = −0.2047, 0.6047 (below 0);
    // logit scale: 0.019533926399233174, 0.7582825428677399
    expect(s.mean).toBe(0.2);
    expect(s.ciMethod).toBe('clustered-logit-t');
    close(s.clusteredStderr, 0.14577379737113247);
    close(s.ci95![0], 0.019533926399233174);
    close(s.ci95![1], 0.7582825428677399);
  });

  it('never leaves [0, 1], and holds its mean (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(0, 1), fc.integer({ min: 0, max: 6 })), { minLength: 2, maxLength: 120 }), (pairs) => {
        const s = metricSpread(
          pairs.map((p) => p[0]),
          pairs.map((p) => `c${p[1]}`),
        );
        if (s.ci95 === null) return;
        expect(s.ci95[0]).toBeGreaterThanOrEqual(0);
        expect(s.ci95[1]).toBeLessThanOrEqual(1);
        expect(s.ci95[0]).toBeLessThanOrEqual(s.mean + 1e-12);
        expect(s.ci95[1]).toBeGreaterThanOrEqual(s.mean - 1e-12);
      }),
      { numRuns: 500, seed: 43 },
    );
  });
});

describe("Durkalski's test", () => {
  it('is McNemar’s χ² (b − c)²/(b + c) when every cluster holds one pair', () => {
    // b = 2 lost, c = 7 gained: stats.chi2.sf((7 - 2)**2 / 9, 1) = 0.09558070454562936
    const a = [1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0];
    const b = [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0];
    close(
      durkalskiP(
        a,
        b,
        a.map((_, i) => `e${i}`),
      ),
      0.09558070454562936,
    );
    expect(durkalskiP([1, 0], [1, 0], ['a', 'b'])).toBe(1);
  });

  it("weighs each cluster's net discordance by its pairs, as clust.bin.pair's durkalski.test does", () => {
    // R/durkalski.R of clust.bin.pair: sum((bk-ck)/nk)^2 / sum(((bk-ck)/nk)^2). Clusters of 2, 5 and 9 pairs, net +1, +1, +3:
    // v = [1/2, 1/5, 3/9]; stats.chi2.sf(v.sum()**2 / (v**2).sum(), 1) = 0.10276821619031566 (unweighted it would be 0.1317)
    const a = [1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0];
    const b = [1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 0];
    const g = [...Array(2).fill('x'), ...Array(5).fill('y'), ...Array(9).fill('z')];
    close(durkalskiP(a, b, g), 0.10276821619031566);
  });
});
