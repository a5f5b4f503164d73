import { describe, expect, it } from 'vitest';
import { scoreTable } from '../../src/compare/episode-scores.js';
import { parseRequirement } from '../../src/compare/gate-requirement.js';
import { parseStopWhen, stopDecision } from '../../src/compare/stop-decision.js';
import { createPrng } from '../../src/core/prng.js';
import type { MetricRanges } from '../../src/core/types.js';
import type { EpisodeRecord } from '../../src/store/types.js';
import { scoredRecord } from '../support/scored-run.js';

const RANGES: MetricRanges = { success: { min: 0, max: 1, goal: 'max' } };

function records(n: number, rate: number, seed: number): EpisodeRecord[] {
  const rng = createPrng(seed);
  return Array.from({ length: n }, (_, i) => scoredRecord(i, { success: rng.next() < rate ? 1 : 0 }));
}

const baseline = scoreTable(records(1000, 0.3, 1), RANGES);
const decided = { kind: 'decided', requirement: parseRequirement('success > 0') } as const;

describe('stopDecision', () => {
  it('stops a clearly better run once decided, at an episode set by the records alone', () => {
    const recs = records(1000, 0.6, 2);
    const d = stopDecision(recs, baseline, decided, { metricRanges: RANGES, maxEpisodes: 1000 });
    expect(d).toMatchObject({ stop: true, reason: 'decided', verdict: 'pass' });
    expect(d.atEpisode).toBeLessThan(300);
    expect(d.interval![0]).toBeGreaterThan(0);
    // The prefix up to that episode stops at the same one; one record short goes on.
    const at = d.atEpisode!;
    expect(stopDecision(recs.slice(0, at), baseline, decided, { metricRanges: RANGES })).toEqual(d);
    expect(stopDecision(recs.slice(0, at - 1), baseline, decided, { metricRanges: RANGES })).toMatchObject({
      stop: false,
      verdict: 'inconclusive',
    });
  });

  it('runs an A/A pair to its budget, inconclusive', () => {
    const d = stopDecision(records(1000, 0.3, 3), baseline, decided, { metricRanges: RANGES, maxEpisodes: 500 });
    expect(d).toMatchObject({ stop: true, reason: 'budget', atEpisode: 500, verdict: 'inconclusive' });
  });

  it('stops a run without a baseline on its own interval’s half-width', () => {
    const d = stopDecision(records(2000, 0.5, 4), null, { kind: 'halfwidth', metric: 'success', halfwidth: 0.1 }, { metricRanges: RANGES });
    expect(d).toMatchObject({ stop: true, reason: 'halfwidth' });
    expect((d.interval![1] - d.interval![0]) / 2).toBeLessThanOrEqual(0.1);
    expect(d.atEpisode).toBeGreaterThan(50);
  });

  it('refuses to stop on a decision with no baseline, or at a half-width ≤ 0', () => {
    expect(() => stopDecision([], null, decided)).toThrow(/against a baseline/);
    expect(() => stopDecision([], null, { kind: 'halfwidth', metric: 'success', halfwidth: 0 })).toThrow(/> 0/);
  });
});

describe('parseStopWhen', () => {
  it('reads decided and halfwidth<=x, and refuses anything else naming it', () => {
    expect(parseStopWhen('decided')).toEqual({ kind: 'decided' });
    expect(parseStopWhen('halfwidth<=0.02')).toEqual({ kind: 'halfwidth', halfwidth: 0.02 });
    expect(parseStopWhen(' halfwidth <= 1e-3 ')).toEqual({ kind: 'halfwidth', halfwidth: 0.001 });
    for (const bad of ['halfwidth<=0', 'halfwidth<-0.1', 'soon', 'halfwidth<=abc'])
      expect(() => parseStopWhen(bad), bad).toThrow(new RegExp(`--stop-when "${bad}"`));
  });
});
