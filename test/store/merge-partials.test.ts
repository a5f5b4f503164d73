import { describe, expect, it } from 'vitest';
import { computeAggregates } from '../../src/store/aggregate.js';
import { MergeError, mergePartials, type PartialRun } from '../../src/store/merge-partials.js';
import type { EpisodeRecord, RunSpec, RunSummary } from '../../src/store/types.js';

const spec = (over: Partial<RunSpec> = {}): RunSpec =>
  ({
    graphName: 'g',
    episodeCount: 6,
    workerCount: 1,
    seed: 1,
    perStepTimeoutSec: 2,
    priority: 0,
    exclusiveGpu: false,
    viaSubprocess: true,
    overrides: {},
    episodeOffset: 0,
    shardSize: 2,
    runId: '20260101_000000',
    createdAt: '2026-01-01T00:00:00.000Z',
    ...over,
  }) as RunSpec;

const record = (index: number): EpisodeRecord => ({
  index,
  episodeId: `g/${index}`,
  status: 'SUCCESS' as EpisodeRecord['status'],
  steps: index,
  metrics: { x: index * 0.5 },
  seed: index,
  workerId: 0,
  durationMs: 1,
  startedAt: 't',
  finishedAt: 't',
  stepBudget: 10,
  assets: [],
});

const partial = (source: string, indices: number[], over: Partial<RunSpec> = {}): PartialRun => ({
  source,
  spec: spec(over),
  summary: { status: 'COMPLETED', startedAt: null, finishedAt: null, episodes: indices.map(record) } as unknown as RunSummary,
});

const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(MergeError);
    return (err as MergeError).code;
  }
  return undefined;
};

describe('mergePartials', () => {
  it('folds partials in index order whatever their order, aggregates as one run does', () => {
    const m = mergePartials([partial('b', [4, 5]), partial('a', [0, 1, 2, 3])], { runId: '20260101_000001' });
    expect(m.summary.episodes.map((e) => e.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(m.summary.aggregateMetrics).toEqual(computeAggregates([0, 1, 2, 3, 4, 5].map(record)).aggregateMetrics);
    expect(m.spec.runId).toBe('20260101_000001');
    expect(m.sourceOf.get(5)).toBe('b');
  });

  it('one code each: mismatch, overlap, gap', () => {
    expect(codeOf(() => mergePartials([partial('a', [0, 1, 2]), partial('b', [3, 4, 5], { shardSize: 3 })], { runId: 'r' }))).toBe(
      'MERGE_MISMATCH',
    );
    expect(codeOf(() => mergePartials([partial('a', [0, 1, 2, 3]), partial('b', [2, 3, 4, 5])], { runId: 'r' }))).toBe('MERGE_OVERLAP');
    expect(codeOf(() => mergePartials([partial('a', [0, 1]), partial('b', [4, 5])], { runId: 'r' }))).toBe('MERGE_GAP');
  });
});
