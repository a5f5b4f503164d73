/** Pairing rules of compareRuns on hand-made records: repeats pooled, endings left out and counted, BH over candidates. */
import { describe, expect, it } from 'vitest';
import { compareRuns, NoSharedEpisodesError } from '../../src/compare/compare-runs.js';
import { scoreTable } from '../../src/compare/episode-scores.js';
import { isPowerReference, powerPlan } from '../../src/compare/power-plan.js';
import { scoreIndexOf } from '../../src/compare/score-index.js';
import { meanAndSd } from '../../src/stats/intervals.js';
import type { EpisodeRecord } from '../../src/store/types.js';

function rec(
  index: number,
  episodeId: string,
  metrics: EpisodeRecord['metrics'],
  status: EpisodeRecord['status'] = 'COMPLETED',
  cluster?: string,
): EpisodeRecord {
  return {
    index,
    episodeId,
    status,
    steps: 1,
    metrics,
    seed: index,
    workerId: 0,
    durationMs: 1,
    startedAt: '',
    finishedAt: '',
    stepBudget: 10,
    assets: [],
    ...(cluster ? { cluster } : {}),
  };
}

describe('scoreTable', () => {
  it("averages an episode's repeats and leaves uncounted endings out", () => {
    const t = scoreTable([
      rec(0, 'e/0', { s: 1, x: 2 }),
      rec(1, 'e/0', { s: 0 }),
      rec(2, 'e/0', { s: 1 }, 'CANCELLED'),
      rec(3, 'e/1', { s: 0 }, 'INFRA_ERROR'),
      rec(4, 'e/1', { s: 1, x: 4 }, 'BUDGET_EXHAUSTED'),
    ]);
    expect(t.metrics).toEqual(['s', 'x']);
    expect(Object.fromEntries(t.episodes.get('e/0')!.values)).toEqual({ s: 0.5, x: 2 });
    expect(Object.fromEntries(t.episodes.get('e/1')!.values)).toEqual({ s: 1, x: 4 });
    expect(t.episodes.get('e/0')!.index).toBe(0);
  });

  it('averages repeats near the largest double to a finite mean (their plain sum overflows), so the run gets a score index', () => {
    const t = scoreTable([
      rec(0, 'e/0', { big: 1e308, s: 1 }),
      rec(1, 'e/0', { big: 1e308, s: 0 }),
      rec(2, 'e/1', { big: 1.5e308 }),
      rec(3, 'e/1', { big: 1.5e308 }),
      rec(4, 'e/1', { big: -1.5e308 }),
      rec(5, 'e/1', { big: 1e300 }, 'CANCELLED'),
    ]);
    expect(Object.fromEntries(t.episodes.get('e/0')!.values)).toEqual({ big: 1e308, s: 0.5 });
    // (1.5 + 1.5 − 1.5) / 3 · 1e308, the CANCELLED play left out as always.
    expect(t.episodes.get('e/1')!.values.get('big')! / 5e307).toBeCloseTo(1, 14);
    expect(scoreIndexOf({ runId: 'r', graphName: 'g', status: 'COMPLETED' }, t, { mtimeMs: 1, size: 1 })).not.toBeNull();
  });

  it("keeps the plain sum's bits for ordinary repeats: the sum in index order, divided by the plays", () => {
    const values = [0.1, 0.7, 0.2, 1 / 3, 2 / 3, 1e-9, 12345.678];
    const t = scoreTable(values.map((v, i) => rec(i, `e/${i % 2}`, { x: v })));
    for (const e of [0, 1]) {
      let sum = 0;
      let k = 0;
      for (let i = e; i < values.length; i += 2, k++) sum += values[i]!;
      expect(t.episodes.get(`e/${e}`)!.values.get('x')).toBe(sum / k);
    }
  });
});

describe('compareRuns', () => {
  const base = { runId: 'A', scores: scoreTable([0, 1, 2, 3].map((i) => rec(i, `e/${i}`, { s: i % 2 }))) };

  it('pairs by episodeId whatever the index, counts excluded pairs, and notes a partial overlap', () => {
    const cand = {
      runId: 'B',
      scores: scoreTable([rec(0, 'e/3', { s: 0 }), rec(1, 'e/2', { s: 1 }), rec(2, 'e/1', { s: 1 }, 'CANCELLED'), rec(3, 'e/9', { s: 1 })]),
    };
    const c = compareRuns(base, [cand]);
    const cc = c.candidates[0]!;
    expect(cc).toMatchObject({ overlap: 3, partial: true, baselineEpisodes: 4, candidateEpisodes: 4 });
    expect(cc.note).toContain('3 episodes');
    const s = cc.metrics[0]!;
    expect(s).toMatchObject({ metric: 's', n: 2, excludedPairs: 1, wins: 1, ties: 0, losses: 1, binary: true });
    expect(s.flips.map((f) => [f.episodeId, f.direction, f.baselineIndex, f.candidateIndex])).toEqual([
      ['e/2', 'gained', 2, 1],
      ['e/3', 'lost', 3, 0],
    ]);
  });

  it('reads 0/1 values as rates only where both runs declare a range inside [0, 1]', () => {
    const base = [0, 0, 1, 0].map((v, i) => rec(i, `e${i}`, { hits: v }));
    const cand = [1, 1, 1, 0].map((v, i) => rec(i, `e${i}`, { hits: v }));
    const count = { hits: { min: 0 } };
    const rate = { hits: { min: 0, max: 1 } };
    const asCount = compareRuns({ runId: 'a', scores: scoreTable(base, count) }, [{ runId: 'b', scores: scoreTable(cand, count) }]);
    expect(asCount.candidates[0]!.metrics[0]).toMatchObject({ binary: false, mcnemarP: null, flips: [] });
    const asRate = compareRuns({ runId: 'a', scores: scoreTable(base, rate) }, [{ runId: 'b', scores: scoreTable(cand, rate) }]);
    expect(asRate.candidates[0]!.metrics[0]).toMatchObject({ binary: true });
    expect(asRate.candidates[0]!.metrics[0]!.flips).toHaveLength(2);
    // A range only one side declares is not used: the values decide, as before ranges existed.
    const oneSided = compareRuns({ runId: 'a', scores: scoreTable(base, count) }, [{ runId: 'b', scores: scoreTable(cand) }]);
    expect(oneSided.candidates[0]!.metrics[0]).toMatchObject({ binary: true });
  });

  it('refuses runs that share no episode', () => {
    expect(() => compareRuns(base, [{ runId: 'C', scores: scoreTable([rec(0, 'other/0', { s: 1 })]) }])).toThrow(NoSharedEpisodesError);
  });

  it('says which metric differs by more than a double holds, its statistics ±Infinity (null in JSON), and leaves the others as they are', () => {
    const run = (id: string, big: number) => ({
      runId: id,
      scores: scoreTable([0, 1, 2, 3].map((i) => rec(i, `e/${i}`, { big, s: big > 0 ? i % 2 : 1 }))),
    });
    const c = compareRuns(run('A', 1e308), [run('B', -1e308)]).candidates[0]!;
    expect(c.note).toBe('big: candidate − baseline goes beyond what a double holds (±1.8e308), so the statistics that do not fit are null');
    const [big, s] = c.metrics;
    expect(big).toMatchObject({ metric: 'big', n: 4, meanDiff: Number.NEGATIVE_INFINITY, diffSd: 0, losses: 4, testP: 0 });
    expect(JSON.parse(JSON.stringify(big))).toMatchObject({
      meanDiff: null,
      ci95: [null, null],
      baselineMean: 1e308,
      candidateMean: -1e308,
    });
    expect(s).toMatchObject({ meanDiff: 0.5, wins: 2, ties: 2 });
    // Opposite extremes that cancel are a plain 0, and no note; an ordinary comparison has none either.
    const mixed = (id: string, sign: number) => ({
      runId: id,
      scores: scoreTable([0, 1, 2, 3].map((i) => rec(i, `e/${i}`, { big: (i % 2 ? 1e308 : -1e308) * sign }))),
    });
    const m = compareRuns(mixed('A', 1), [mixed('B', -1)]).candidates[0]!;
    expect(m.metrics[0]!.meanDiff).toBe(0);
    expect(compareRuns(base, [{ runId: 'B', scores: base.scores }]).candidates[0]!.note).toBeNull();
  });

  it('clusters the paired interval when episodes carry a cluster', () => {
    const mk = (flip: number) =>
      scoreTable(Array.from({ length: 12 }, (_, i) => rec(i, `e/${i}`, { v: (i * 7 + flip * i) % 5 }, 'COMPLETED', `c${i % 4}`)));
    const c = compareRuns({ runId: 'A', scores: mk(0) }, [{ runId: 'B', scores: mk(3) }]);
    expect(c.candidates[0]!.metrics[0]).toMatchObject({ ciMethod: 'clustered-t', clusters: 4, df: 3 });
  });
});

describe('powerPlan', () => {
  const run = (id: string, values: number[]) => ({ runId: id, scores: scoreTable(values.map((v, i) => rec(i, `e/${i}`, { v }))) });

  it('plans from the paired sd a comparison reports, also where a difference overflows (1e308 against −1e308)', () => {
    const ref = run('A', [1e308, 1e308, -1e308, -1e308]);
    const own = run('B', [-1e308, -1e308, 1e308, 1e308]);
    const plan = powerPlan(own, [ref], { effects: { '*': { value: 1e308, relative: false } } });
    const cmp = compareRuns(ref, [own]).candidates[0]!.metrics[0]!;
    // Differences ±2e308: their sd (2e308 · 2/√3) is beyond a double, and so is the plan's; never NaN.
    expect(plan).toMatchObject({ source: 'paired', metrics: [{ n: 4, sd: cmp.diffSd }] });
    expect(cmp.diffSd).toBe(Number.POSITIVE_INFINITY);
    // A spread that fits: differences 1.8e308 and 1e308 ×3 (one overflows), sd 0.4e308.
    const fits = powerPlan(run('B', [9e307, 5e307, 5e307, 5e307]), [run('A', [-9e307, -5e307, -5e307, -5e307])]);
    expect(fits.metrics[0]!.sd / 4e307).toBeCloseTo(1, 14);
    expect(Number.isFinite(fits.metrics[0]!.mde)).toBe(true);
  });

  it("keeps the plain sd's bits for ordinary runs", () => {
    const a = [0.61, 0.48, 0.9, 0.33, 0.75];
    const b = [0.66, 0.5, 0.97, 0.31, 0.83];
    const plan = powerPlan(run('B', b), [run('A', a)], { effects: { '*': { value: 0.1, relative: false } } });
    expect(plan.metrics[0]!.sd).toBe(meanAndSd(b.map((v, i) => v - a[i]!)).sd);
    expect(powerPlan(run('B', b), []).metrics[0]!.sd).toBe(meanAndSd(b).sd);
  });
});

describe('isPowerReference', () => {
  const table = (values: number[], prefix = 'e') => scoreTable(values.map((s, i) => rec(i, `${prefix}/${i}`, { s })));

  it('takes a run that shares episodes and scores one differently, not a re-run of the same config or a disjoint run', () => {
    expect(isPowerReference(table([1, 0, 1]), table([1, 1, 1]))).toBe(true);
    expect(isPowerReference(table([1, 0, 1]), table([1, 0, 1]))).toBe(false);
    expect(isPowerReference(table([1, 0, 1]), table([0, 1, 0], 'other'))).toBe(false);
  });
});
