/** The latest-attempt fold, which episodes a retry plays, and the report's list of retried episodes. */
import { describe, expect, it } from 'vitest';
import { computeAggregates } from '../../src/store/aggregate.js';
import {
  DEFAULT_RETRY_ENDINGS,
  attemptOfIndex,
  foldLatestAttempts,
  planRetry,
  retriedEpisodesOf,
  retryEndingsOf,
  type AttemptsFile,
} from '../../src/store/attempts.js';
import type { EpisodeRecord } from '../../src/store/types.js';
import type { EpisodeStatus } from '../../src/statuses.js';

function record(index: number, status: EpisodeStatus, success: number): EpisodeRecord {
  return {
    index,
    episodeId: `g/val/${index}`,
    status,
    steps: 5,
    metrics: { success, spl: success * 0.5 },
    seed: 1000 + index,
    workerId: 0,
    durationMs: 10,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:01.000Z',
    stepBudget: 50,
    assets: [],
  };
}

const clean = Array.from({ length: 10 }, (_, i) => record(i, 'COMPLETED', i % 3 === 0 ? 0 : 1));

describe('foldLatestAttempts', () => {
  it('takes each index from the latest attempt that has it, in index order, whatever order records arrive in', () => {
    const first = clean
      .map((r) => (r.index === 2 ? record(2, 'CRASHED', 0) : r.index === 7 ? record(7, 'TIMEOUT', 0) : r))
      .filter((r) => r.index !== 9);
    const second = [clean[9]!, clean[7]!, clean[2]!];
    const folded = foldLatestAttempts([
      { attempt: 2, records: second },
      { attempt: 1, records: [...first].reverse() },
    ]);
    expect(folded).toEqual(clean);
    expect(JSON.stringify(computeAggregates(folded))).toBe(JSON.stringify(computeAggregates(clean)));
  });

  it('a third attempt wins over the second; an attempt missing an index keeps the earlier record', () => {
    const folded = foldLatestAttempts([
      { attempt: 1, records: [record(0, 'CRASHED', 0), record(1, 'COMPLETED', 1)] },
      { attempt: 2, records: [record(0, 'TIMEOUT', 0)] },
      { attempt: 3, records: [record(0, 'COMPLETED', 1)] },
    ]);
    expect(folded.map((r) => r.status)).toEqual(['COMPLETED', 'COMPLETED']);
  });
});

describe('planRetry', () => {
  const spec = { episodeCount: 6 };
  const records = [
    record(0, 'COMPLETED', 1),
    record(1, 'CRASHED', 0),
    record(2, 'BUDGET_EXHAUSTED', 0),
    record(3, 'TIMEOUT', 0),
    record(5, 'CANCELLED', 0),
  ];

  it('plays the default failures and the episodes that never ran, never a result', () => {
    const plan = planRetry(spec, records, DEFAULT_RETRY_ENDINGS, () => 1, 1);
    expect(plan).toEqual([
      { index: 1, ending: 'CRASHED', attempt: 1 },
      { index: 3, ending: 'TIMEOUT', attempt: 1 },
      { index: 4, ending: null, attempt: 1 },
      { index: 5, ending: 'CANCELLED', attempt: 1 },
    ]);
  });

  it('narrows to the endings asked for; BUDGET_EXHAUSTED only when asked', () => {
    expect(planRetry(spec, records, ['TIMEOUT'], () => 1, 1).map((r) => r.index)).toEqual([3, 4]);
    expect(planRetry(spec, records, ['BUDGET_EXHAUSTED'], () => 1, 1).map((r) => r.index)).toEqual([2, 4]);
  });

  it('names the attempt each earlier record came from', () => {
    const file: AttemptsFile = {
      attempts: [
        { attempt: 1, requestedAt: 'a' },
        { attempt: 2, requestedAt: 'b', indices: [3] },
      ],
    };
    expect(planRetry(spec, records, ['TIMEOUT'], attemptOfIndex(file), 2)).toEqual([
      { index: 3, ending: 'TIMEOUT', attempt: 2 },
      { index: 4, ending: null, attempt: 2 },
    ]);
  });
});

describe('retryEndingsOf', () => {
  it('defaults to the non-agent failures, accepts any case, refuses COMPLETED and unknown endings', () => {
    expect(retryEndingsOf(undefined)).toEqual(['CRASHED', 'TIMEOUT', 'ERROR', 'INFRA_ERROR', 'CANCELLED']);
    expect(retryEndingsOf(['timeout', 'CRASHED', 'TIMEOUT'])).toEqual(['TIMEOUT', 'CRASHED']);
    expect(() => retryEndingsOf(['COMPLETED'])).toThrow(/never played again/);
    expect(() => retryEndingsOf(['CRASHD'])).toThrow(/unknown ending "CRASHD"/);
  });

  it('refuses an empty list instead of reading it as the default', () => {
    expect(() => retryEndingsOf([])).toThrow(/endings is empty: name the endings to retry, or leave it out for CRASHED, TIMEOUT/);
  });
});

describe('retriedEpisodesOf', () => {
  it('lists every retried episode with its latest attempt, its ending now and its earlier endings', () => {
    const file: AttemptsFile = {
      attempts: [
        { attempt: 1, requestedAt: 'a' },
        {
          attempt: 2,
          requestedAt: 'b',
          indices: [1, 4],
          retried: [
            { index: 1, ending: 'CRASHED', attempt: 1 },
            { index: 4, ending: null, attempt: 1 },
          ],
        },
        { attempt: 3, requestedAt: 'c', indices: [1], retried: [{ index: 1, ending: 'TIMEOUT', attempt: 2 }] },
      ],
    };
    const now = [record(0, 'COMPLETED', 1), record(1, 'COMPLETED', 1), record(4, 'COMPLETED', 0)];
    expect(retriedEpisodesOf(file, now)).toEqual([
      {
        index: 1,
        episodeId: 'g/val/1',
        attempt: 3,
        status: 'COMPLETED',
        earlier: [
          { attempt: 1, ending: 'CRASHED' },
          { attempt: 2, ending: 'TIMEOUT' },
        ],
      },
      { index: 4, episodeId: 'g/val/4', attempt: 2, status: 'COMPLETED', earlier: [{ attempt: 1, ending: null }] },
    ]);
    expect(retriedEpisodesOf(null, now)).toEqual([]);
  });
});
