/** buildReport over hand-made summaries: endings, infrastructure failures, costs, label detection, rescorings. */
import { describe, expect, it } from 'vitest';
import { initialSummary } from '../../src/eval-process/summary-writer.js';
import { computeAggregates } from '../../src/store/aggregate.js';
import { buildReport } from '../../src/store/report.js';
import type { RescoreFile } from '../../src/store/rescores.js';
import type { EpisodeRecord, RunSummary, ScoreEntry } from '../../src/store/types.js';
import { classify, looksLikeLabels, OTHER_LABEL } from '../../src/scoring/classification.js';

const score = (value: number, target: string | number | string[], extracted: string | null = null): ScoreEntry => ({
  scorer: 'exact',
  value,
  answer: extracted,
  extracted,
  target,
  explanation: '',
});

function record(
  index: number,
  status: EpisodeRecord['status'],
  scores?: ScoreEntry[],
  metrics: EpisodeRecord['metrics'] = {},
): EpisodeRecord {
  return {
    index,
    episodeId: `d/s/${index}`,
    status,
    steps: 1,
    metrics,
    seed: 0,
    workerId: 0,
    durationMs: 10,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:00.000Z',
    stepBudget: 1,
    assets: [],
    ...(scores ? { scores } : {}),
  };
}

function summaryOf(records: EpisodeRecord[]): RunSummary {
  const s = initialSummary({
    runId: '20260101_000000',
    graphName: 'g',
    episodeCount: records.length,
    workerCount: 1,
    seed: 0,
    priority: 0,
    createdAt: '2026-01-01T00:00:00.000Z',
  });
  return { ...s, status: 'COMPLETED', ...computeAggregates(records), episodes: records, episodesDone: records.length };
}

describe('buildReport', () => {
  const records = [
    record(0, 'COMPLETED', [score(1, '12', '12')], { llm_calls: 2, prompt_tokens: 100, completion_tokens: 10, llm_retries: 0 }),
    // The "infrastructure failure" ending is counted by name: not a wrong answer, left out of the scores.
    record(1, 'INFRA_ERROR' as EpisodeRecord['status'], undefined, { llm_calls: 1, llm_retries: 3 }),
    record(2, 'BUDGET_EXHAUSTED', undefined, { llm_calls: 2, prompt_tokens: 50, completion_tokens: 5, llm_retries: 1 }),
    record(3, 'COMPLETED', [score(0, '7', '8')], { llm_calls: 1, prompt_tokens: 30, completion_tokens: 3 }),
    record(4, 'ERROR'),
    record(5, 'CANCELLED', [score(0, '1', '2')]),
  ];
  const report = buildReport(summaryOf(records));

  it('rates each ending and the infrastructure failures; counts failed and retried episodes', () => {
    expect(report.endings.map((e) => [e.status, e.count])).toEqual([
      ['BUDGET_EXHAUSTED', 1],
      ['CANCELLED', 1],
      ['COMPLETED', 2],
      ['ERROR', 1],
      ['INFRA_ERROR', 1],
    ]);
    expect(report.infrastructureFailures).toEqual({ count: 1, rate: 1 / 6 });
    expect(report.failed).toBe(1);
    expect(report.retried).toEqual({ episodes: 2, retries: 4 });
  });

  it('scores over every counted play, an unanswered one at 0 (infrastructure failures and cancelled ones left out)', () => {
    // Counted: 0 (1), 2 (out of budget: unanswered), 3 (0), 4 (error: unanswered) → [1, 0, 0, 0].
    expect(report.scorers).toEqual([
      { scorer: 'exact', rescored: false, count: 4, mean: 0.25, stderr: 0.25, correct: 1, accuracy: 0.25, unanswered: 2 },
    ]);
    expect(report.worst.map((e) => e.index)).toEqual([3]);
    expect(report.best.map((e) => e.index)).toEqual([0]);
  });

  it('reports tokens, calls and time per episode where the graph emits them', () => {
    const by = Object.fromEntries(report.perEpisode.map((c) => [c.metric, c]));
    expect(by.llm_calls).toEqual({ metric: 'llm_calls', mean: 1.5, total: 6, count: 4 });
    expect(by.prompt_tokens).toMatchObject({ total: 180, count: 3 });
    expect(by.durationMs).toMatchObject({ mean: 10, total: 60 });
    expect(by.llm_cache_hits).toBeUndefined();
  });

  it('appends a stream per rescoring, after the records’ own', () => {
    const rescore: RescoreFile = {
      scorer: 'numeric',
      config: { abs_tol: 1 },
      createdAt: '2026-01-01T00:00:00.000Z',
      episodes: [
        { index: 0, episodeId: 'd/s/0', score: { ...score(1, '12', '12'), scorer: 'numeric', rescored: true } },
        { index: 3, episodeId: 'd/s/3', score: { ...score(1, '7', '8'), scorer: 'numeric', rescored: true } },
      ],
      skipped: [1, 2, 4],
    };
    const r = buildReport(summaryOf(records), [rescore]);
    expect(r.scorers.map((s) => [s.scorer, s.rescored, s.correct, s.config])).toEqual([
      ['exact', false, 1, undefined],
      ['numeric', true, 2, { abs_tol: 1 }],
    ]);
  });
});

describe('classification', () => {
  it('detects label targets: few distinct single targets shared by several episodes', () => {
    const labels = ['a', 'b', 'a', 'b'].map((t) => score(1, t, t));
    expect(looksLikeLabels(labels)).toBe(true);
    expect(looksLikeLabels(['a', 'b', 'c', 'd'].map((t) => score(1, t, t)))).toBe(false);
    expect(looksLikeLabels([score(1, ['a', 'b']), score(1, 'a'), score(1, 'a'), score(1, 'b')])).toBe(false);
    expect(looksLikeLabels(['a', 'a'].map((t) => score(1, t, t)))).toBe(false);
  });

  it('computes accuracy, per-class precision/recall/F1, macro F1 and the confusion matrix', () => {
    // truth:     cat cat cat dog dog bird
    // predicted: cat dog cat dog cat (none)
    const entries = [
      score(1, 'cat', 'cat'),
      score(0, 'Cat', 'dog'),
      score(1, 'cat', 'Cat.'),
      score(1, 'dog', 'dog'),
      score(0, 'dog', 'cat'),
      score(0, 'bird', null),
    ];
    const c = classify(entries);
    expect(c.count).toBe(6);
    expect(c.accuracy).toBe(3 / 6);
    expect(c.confusion).toEqual({
      labels: ['bird', 'cat', 'dog'],
      predicted: ['bird', 'cat', 'dog', OTHER_LABEL],
      matrix: [
        [0, 0, 0, 1],
        [0, 2, 1, 0],
        [0, 1, 1, 0],
      ],
    });
    const cat = c.perClass.find((k) => k.label === 'cat')!;
    expect(cat).toMatchObject({ precision: 2 / 3, recall: 2 / 3, support: 3 });
    expect(cat.f1).toBeCloseTo(2 / 3, 12);
    expect(c.perClass.find((k) => k.label === 'bird')).toEqual({ label: 'bird', precision: 0, recall: 0, f1: 0, support: 1 });
    // sklearn's f1_score(average="macro") over bird/cat/dog: (0 + 2/3 + 1/2) / 3
    expect(c.macroF1).toBeCloseTo((0 + 2 / 3 + 0.5) / 3, 12);
  });
});
