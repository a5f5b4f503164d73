import { describe, expect, it } from 'vitest';
import { initialSummary } from '../../src/eval-process/summary-writer.js';
import { recordJsonInSummary, summaryJsonText } from '../../src/eval-process/summary-json.js';
import type { EpisodeRecord, RunSummary } from '../../src/store/types.js';

const record = (index: number): EpisodeRecord => ({
  index,
  episodeId: `arith/test/"q${index}"`,
  status: index % 2 ? 'COMPLETED' : 'ERROR',
  steps: 2,
  metrics: { correct: index % 3 === 0, score: index / 7, note: 'a\nb\t"c" é 🙂' },
  seed: index,
  workerId: 1,
  durationMs: 5,
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:01.000Z',
  instruction: 'What is 2 + 2?\n  "episodes": "x"',
  stepBudget: 10,
  ...(index % 2 ? { error: 'line one\nline two', nodeErrors: [] } : {}),
  assets: index === 3 ? [{ name: 'a.png', mime: 'image/png', bytes: 3, nodeId: 'env', step: 0 }] : [],
  ...(index === 2 ? { scores: [] } : {}),
});

describe('summaryJsonText', () => {
  it('writes what JSON.stringify(summary, null, 2) writes, with 0, 1 and several episodes, a pid and repeats', () => {
    const base = initialSummary({
      runId: 'r1',
      graphName: 'g',
      episodeCount: 4,
      workerCount: 2,
      seed: 3,
      priority: 0,
      createdAt: '2026-01-01T00:00:00.000Z',
      repeats: 2,
    });
    const cases: RunSummary[] = [
      base,
      { ...base, pid: 42, episodes: [record(0)], error: { code: 'X', message: 'he said "no"\n  "episodes": []' } },
      { ...base, aggregateByTask: { a: [] }, statusCounts: { COMPLETED: 2 }, episodes: [0, 1, 2, 3].map(record) },
    ];
    for (const s of cases) {
      expect(summaryJsonText({ ...s, episodes: [] }, s.episodes.map(recordJsonInSummary))).toBe(JSON.stringify(s, null, 2) + '\n');
    }
  });
});
