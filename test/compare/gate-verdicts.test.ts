import { describe, expect, it } from 'vitest';
import type { ScoredRun } from '../../src/compare/compare-runs.js';
import { scoreTable } from '../../src/compare/episode-scores.js';
import { parseRequirement } from '../../src/compare/gate-requirement.js';
import { gateVerdicts } from '../../src/compare/gate-verdicts.js';
import type { MetricRanges } from '../../src/core/types.js';
import { createPrng } from '../../src/core/prng.js';
import type { EpisodeRecord } from '../../src/store/types.js';
import { scoredRecord } from '../support/scored-run.js';

const RANGES: MetricRanges = { success: { min: 0, max: 1, goal: 'max' }, steps: { min: 0, max: 50, goal: 'min' } };

/** A run of `n` episodes: success drawn at `rate` (seeded), steps 20 fewer on a success. */
function records(n: number, rate: number, seed: number): EpisodeRecord[] {
  const rng = createPrng(seed);
  return Array.from({ length: n }, (_, i) => {
    const success = rng.next() < rate ? 1 : 0;
    return scoredRecord(i, { success, steps: success ? 20 : 40 });
  });
}

const run = (runId: string, recs: EpisodeRecord[], ranges: MetricRanges | undefined = RANGES): ScoredRun => ({
  runId,
  scores: scoreTable(recs, ranges),
});

describe('parseRequirement', () => {
  it('reads superiority, non-inferiority and equivalence from a bound on candidate − baseline', () => {
    expect(parseRequirement('success > 0')).toMatchObject({ question: 'superiority', direction: 'up', threshold: 0, margin: 0 });
    expect(parseRequirement('success >= -0.02')).toMatchObject({ question: 'non-inferiority', direction: 'up', margin: 0.02 });
    expect(parseRequirement('steps <= 2')).toMatchObject({ question: 'non-inferiority', direction: 'down', margin: 2 });
    expect(parseRequirement('steps < -1')).toMatchObject({ question: 'superiority', direction: 'down', margin: 1 });
    expect(parseRequirement(' |success| <= 0.05 ')).toMatchObject({ question: 'equivalence', direction: null, margin: 0.05 });
  });

  it('refuses what it cannot read, naming the text', () => {
    for (const bad of ['success', 'success => 0', '|success| >= 0.1', '|success| <= 0', 'success > abc', '|success <= 0.1'])
      expect(() => parseRequirement(bad), bad).toThrow(new RegExp(`requirement "${bad.replace(/[|()]/g, '\\$&')}"`));
  });
});

describe('gateVerdicts', () => {
  const base = run('base', records(600, 0.4, 1));

  it('passes a clearly better candidate, decided before its last episode, and fails a clearly worse one', () => {
    const better = gateVerdicts(base, run('better', records(600, 0.7, 2)), { requirements: [parseRequirement('success > 0')] });
    expect(better.verdict).toBe('pass');
    const m = better.metrics[0]!;
    expect(m).toMatchObject({ verdict: 'pass', method: 'betting', level: 0.05, n: 600, episodesNeeded: null });
    expect(m.decidedAt).toBeLessThan(300);
    expect(m.interval![0]).toBeGreaterThan(0);

    const worse = gateVerdicts(base, run('worse', records(600, 0.1, 3)), { requirements: [parseRequirement('success >= -0.02')] });
    expect(worse.verdict).toBe('fail');
    expect(worse.metrics[0]!.interval![1]).toBeLessThan(-0.02);
  });

  it('calls a short comparison inconclusive, with the MDE at this n and the episodes a fixed-n plan would need', () => {
    const g = gateVerdicts(run('b', records(40, 0.5, 4)), run('c', records(40, 0.55, 5)), {
      requirements: [parseRequirement('success > 0')],
    });
    expect(g.verdict).toBe('inconclusive');
    const m = g.metrics[0]!;
    expect(m.decidedAt).toBeNull();
    expect(m.interval![0]).toBeLessThan(0);
    expect(m.interval![1]).toBeGreaterThan(0);
    expect(m.mde).toBeGreaterThan(0.2);
    expect(m.episodesNeeded).toBeGreaterThan(40);
    expect(m.reason).toMatch(/straddles the bound after 40 pairs/);
  });

  it('passes equivalence for identical runs, and judges every goal metric against the baseline when nothing is asked (Holm over them)', () => {
    const same = gateVerdicts(base, run('same', records(600, 0.4, 1)), {
      requirements: [parseRequirement('|success| <= 0.1')],
    });
    expect(same.metrics[0]).toMatchObject({ verdict: 'pass', question: 'equivalence' });

    const g = gateVerdicts(base, run('better', records(600, 0.7, 2)));
    expect(g.metrics.map((m) => [m.metric, m.requirement, m.verdict])).toEqual([
      ['steps', 'steps < 0', 'pass'],
      ['success', 'success > 0', 'pass'],
    ]);
    expect(g.correction).toBe('holm');
    // Holm: the first metric decided at α/2, the other once one has left, at α/2 or α.
    expect(Math.min(...g.metrics.map((m) => m.level))).toBe(0.025);
  });

  it('reads pairs in episode order, whatever order the records arrived in', () => {
    const cand = records(600, 0.55, 6);
    const shuffled = [...cand].reverse();
    const a = gateVerdicts(base, run('c', cand), { requirements: [parseRequirement('success >= -0.05')] });
    const b = gateVerdicts(base, run('c', shuffled), { requirements: [parseRequirement('success >= -0.05')] });
    expect(b).toEqual(a);
    expect(a.metrics[0]!.verdict).toBe('pass');
  });

  it('refuses a metric no run reports, a bound against the goal or past the range, and runs with no goal and no requirement', () => {
    const cand = run('c', records(50, 0.5, 7));
    expect(() => gateVerdicts(base, cand, { requirements: [parseRequirement('reward > 0')] })).toThrow(
      /neither run reports a metric "reward"/,
    );
    expect(() => gateVerdicts(base, cand, { requirements: [parseRequirement('success < 0')] })).toThrow(/higher is better/);
    expect(() => gateVerdicts(base, cand, { requirements: [parseRequirement('success >= -1.5')] })).toThrow(
      /outside what candidate − baseline can be/,
    );
    expect(() => gateVerdicts(run('b', records(10, 0.5, 8), {}), run('c', records(10, 0.5, 9), {}))).toThrow(
      /no metric of these runs declares a goal/,
    );
    expect(() =>
      gateVerdicts(base, cand, { requirements: [parseRequirement('success > 0'), parseRequirement('success >= -0.1')] }),
    ).toThrow(/two requirements/);
  });

  it('uses the asymptotic sequence for a metric with no declared range, and says so', () => {
    const rng = createPrng(9);
    const recs = (shift: number) => Array.from({ length: 400 }, (_, i) => scoredRecord(i, { reward: 10 + shift + rng.next() * 4 }));
    const g = gateVerdicts(run('b', recs(0), {}), run('c', recs(1), {}), { requirements: [parseRequirement('reward > 0')] });
    expect(g.metrics[0]).toMatchObject({ method: 'asymptotic', verdict: 'pass' });
    expect(g.notes.join(' ')).toMatch(/asymptotic/);
  });
});
