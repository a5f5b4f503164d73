/** Field-by-field differences of two records of one episode: timing, placement and latency left out. */
import { describe, expect, it } from 'vitest';
import { diffRecords } from '../../src/store/diff-records.js';
import type { EpisodeRecord } from '../../src/store/types.js';

const record = (over: Partial<EpisodeRecord> = {}): EpisodeRecord => ({
  index: 3,
  episodeId: 'gridnav/val/3',
  status: 'COMPLETED',
  steps: 12,
  metrics: { success: 1, spl: 0.8, llm_latency_ms: 120 },
  seed: 42,
  workerId: 0,
  durationMs: 50,
  startedAt: '2026-11-30T10:00:00.000Z',
  finishedAt: '2026-11-30T10:00:00.050Z',
  stepBudget: 300,
  assets: [{ name: 'trajectory.png', mime: 'image/png', bytes: 900, nodeId: 'env', step: 12 }],
  ...over,
});

describe('diffRecords', () => {
  it('ignores worker, timing and latency fields', () => {
    const other = record({
      workerId: 3,
      durationMs: 999,
      startedAt: '2026-12-01T00:00:00.000Z',
      finishedAt: '2026-12-01T00:00:01.000Z',
      metrics: { success: 1, spl: 0.8, llm_latency_ms: 7 },
    });
    expect(diffRecords(record(), other)).toEqual([]);
  });

  it('names every other differing field by path, in path order, with both values', () => {
    const other = record({
      steps: 13,
      metrics: { success: 0, spl: 0.8, extra: 2 },
      assets: [{ name: 'trajectory.png', mime: 'image/png', bytes: 901, nodeId: 'env', step: 13 }],
    });
    expect(diffRecords(record(), other)).toEqual([
      { path: 'assets[0].bytes', original: 900, audit: 901 },
      { path: 'assets[0].step', original: 12, audit: 13 },
      { path: 'metrics.extra', audit: 2 },
      { path: 'metrics.success', original: 1, audit: 0 },
      { path: 'steps', original: 12, audit: 13 },
    ]);
  });
});
