import { describe, expect, it } from 'vitest';
import { DEFAULT_TASK, aggregateByTask, aggregateMetrics, computeAggregates, summarizeValues } from '../../src/store/aggregate.js';
import type { EpisodeRecord } from '../../src/store/types.js';
import { scoreTable } from '../../src/compare/episode-scores.js';
import type { EpisodeStatus } from '../../src/statuses.js';
import { scoredRecord } from '../support/scored-run.js';

function rec(index: number, metrics: EpisodeRecord['metrics'], status: EpisodeStatus = 'COMPLETED', task?: string): EpisodeRecord {
  return {
    index,
    episodeId: `e/${index}`,
    status,
    steps: 3,
    metrics,
    seed: index,
    workerId: 0,
    durationMs: 1,
    startedAt: '',
    finishedAt: '',
    stepBudget: 10,
    assets: [],
    ...(task ? { task } : {}),
  };
}

describe('aggregates', () => {
  it('computes mean, count, sample stderr, min and max', () => {
    const a = summarizeValues('x', [1, 2, 3, 4]);
    expect(a.mean).toBe(2.5);
    expect(a.count).toBe(4);
    // sample std = sqrt(5/3); stderr = std / 2
    expect(a.stderr).toBeCloseTo(Math.sqrt(5 / 3) / 2, 12);
    expect(a.min).toBe(1);
    expect(a.max).toBe(4);
    expect(summarizeValues('x', [7]).stderr).toBe(0);
  });

  it('leaves INFRA_ERROR episodes out of the metrics (not wrong answers) and counts them apart', () => {
    const records = [
      rec(0, { correct: true, llm_calls: 1 }),
      rec(1, { correct: false, llm_calls: 1 }),
      rec(2, { llm_calls: 0, llm_retries: 4 }, 'INFRA_ERROR'),
    ];
    const all = computeAggregates(records);
    expect(all.aggregateMetrics.find((m) => m.name === 'correct')).toMatchObject({ mean: 0.5, count: 2 });
    expect(all.aggregateMetrics.find((m) => m.name === 'llm_calls')).toMatchObject({ mean: 1, count: 2 });
    expect(all.aggregateMetrics.find((m) => m.name === 'llm_retries')).toBeUndefined();
    expect(all.statusCounts).toEqual({ COMPLETED: 2, INFRA_ERROR: 1 });
  });

  it('counts booleans as 0/1, skips strings, and leaves cancelled episodes out of the metrics, counted by ending', () => {
    const records = [
      rec(0, { success: true, spl: 0.5, label: 'a' }),
      rec(1, { success: false, spl: 0 }),
      rec(2, { success: true, spl: 0.25 }, 'CANCELLED'),
      rec(3, { success: true }, 'TIMEOUT'),
    ];
    const agg = aggregateMetrics(records);
    expect(agg.map((m) => m.name)).toEqual(['spl', 'success']);
    expect(agg.find((m) => m.name === 'success')).toMatchObject({
      count: 3,
      mean: 2 / 3,
      min: 0,
      max: 1,
      excluded: { CANCELLED: 1 },
    });
    // The TIMEOUT episode did not report spl: left out once, under its ending.
    expect(agg.find((m) => m.name === 'spl')).toMatchObject({ count: 2, mean: 0.25, excluded: { CANCELLED: 1, TIMEOUT: 1 } });
    const all = computeAggregates(records);
    expect(all.statusCounts).toEqual({ COMPLETED: 2, CANCELLED: 1, TIMEOUT: 1 });
    expect(all.timedOut).toBe(true);
  });

  it('gives bit-identical floats whatever order the episodes completed in', () => {
    const values = [0.1, 0.7, 1e-9, 0.3, 12345.678, 0.2, 1 / 3, 2 / 7];
    const records = values.map((v, i) => rec(i, { v }));
    const forward = JSON.stringify(computeAggregates(records));
    for (let shift = 1; shift < values.length; shift++) {
      const shuffled = [...records.slice(shift), ...records.slice(0, shift)].reverse();
      expect(JSON.stringify(computeAggregates(shuffled))).toBe(forward);
    }
  });

  it('groups by task, episodes without one under "default", so every episode counts in one group', () => {
    const byTask = aggregateByTask([
      rec(0, { s: 1 }, 'COMPLETED', 'b'),
      rec(1, { s: 0 }, 'COMPLETED', 'a'),
      rec(2, { s: 1 }, 'COMPLETED', 'a'),
      rec(3, { s: 1 }),
      rec(4, { s: 0 }),
    ]);
    expect(Object.keys(byTask)).toEqual(['a', 'b', DEFAULT_TASK]);
    expect(byTask.a?.[0]).toMatchObject({ name: 's', count: 2, mean: 0.5 });
    expect(byTask.b?.[0]).toMatchObject({ count: 1, mean: 1 });
    expect(byTask[DEFAULT_TASK]?.[0]).toMatchObject({ name: 's', count: 2, mean: 0.5 });
  });

  it('has no task groups when no episode has a task (one group would repeat the run aggregates)', () => {
    expect(aggregateByTask([rec(0, { s: 1 }), rec(1, { s: 0 })])).toEqual({});
  });

  it('gives a metric of 1e308 in every episode the mean 1e308 in summary.json, with or without repeats', () => {
    const plain = computeAggregates([0, 1, 2, 3].map((i) => rec(i, { big: 1e308 })));
    // JSON turns a non-finite number into null: read the aggregate back as summary.json holds it.
    const [agg] = JSON.parse(JSON.stringify(plain.aggregateMetrics));
    expect(agg).toMatchObject({ name: 'big', mean: 1e308, stderr: 0, min: 1e308, max: 1e308, ci95Low: 1e308, ci95High: 1e308 });
    const repeated = [0, 1, 2, 3].map((i) => ({ ...rec(i, { big: 1e308 }), episodeId: `e/${i >> 1}`, repeat: i & 1 }));
    const [rep] = JSON.parse(JSON.stringify(computeAggregates(repeated).aggregateMetrics));
    expect(rep).toMatchObject({ name: 'big', count: 2, mean: 1e308, stderr: 0, withinVar: 0, betweenVar: 0 });
  });
});

describe("every counted play scores, by the metric's declared rule", () => {
  const play = (index: number, status: EpisodeRecord['status'], metrics: EpisodeRecord['metrics'] = {}): EpisodeRecord => ({
    ...scoredRecord(index, metrics),
    status,
  });
  // A scorer's metrics score 0 when missing; latency is a measurement, left out when missing.
  const declared = { correct: { min: 0, max: 1, missing: 0 }, llm_latency_ms: { min: 0, missing: 'exclude' as const } };
  const byName = (records: EpisodeRecord[]) =>
    Object.fromEntries(computeAggregates(records, declared).aggregateMetrics.map((m) => [m.name, m]));

  it('scores an unanswered play (out of budget, errored, timed out) at the missing value and says how many', () => {
    const agg = byName([
      play(0, 'COMPLETED', { correct: 1, llm_latency_ms: 10 }),
      play(1, 'BUDGET_EXHAUSTED', { llm_latency_ms: 30 }),
      play(2, 'COMPLETED', { correct: 1, llm_latency_ms: 20 }),
      play(3, 'ERROR'),
      play(4, 'TIMEOUT', { llm_latency_ms: 40 }),
      play(5, 'INFRA_ERROR'),
      play(6, 'CANCELLED'),
      play(7, 'COMPLETED', { correct: 0, llm_latency_ms: 50 }),
    ]);
    // Six counted plays, two answered right: 2/6, not the 2/3 of the answered ones.
    expect(agg.correct).toMatchObject({ count: 6, mean: 2 / 6, imputed: { BUDGET_EXHAUSTED: 1, ERROR: 1, TIMEOUT: 1 } });
    expect(agg.correct!.excluded).toEqual({ CANCELLED: 1, INFRA_ERROR: 1 });
    // A measurement is never made up: the errored play is left out of latency.
    expect(agg.llm_latency_ms).toMatchObject({ count: 5, mean: 30, excluded: { ERROR: 1, INFRA_ERROR: 1, CANCELLED: 1 } });
    expect(agg.llm_latency_ms!.imputed).toBeUndefined();
  });

  it('keeps the scorer’s line when every play ran out before it scored', () => {
    const agg = byName([play(0, 'BUDGET_EXHAUSTED', { llm_latency_ms: 5 }), play(1, 'BUDGET_EXHAUSTED', { llm_latency_ms: 7 })]);
    expect(agg.correct).toMatchObject({ count: 2, mean: 0, imputed: { BUDGET_EXHAUSTED: 2 } });
  });

  it('has no line for a declared metric when no play counts at all', () => {
    expect(byName([play(0, 'INFRA_ERROR'), play(1, 'CANCELLED')]).correct).toBeUndefined();
  });

  it('scores the same in a comparison: the unanswered play is a 0 in the pairs', () => {
    const table = scoreTable([play(0, 'COMPLETED', { correct: 1 }), play(1, 'BUDGET_EXHAUSTED')], declared);
    expect([...table.episodes.values()].map((e) => e.values.get('correct'))).toEqual([1, 0]);
    expect(table.metrics).toEqual(['correct']);
  });
});
