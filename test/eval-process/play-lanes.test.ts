/**
 * Play lanes: a run whose hosts all sit on the eval process's thread is split over worker
 * threads, one per core. The records are those of one lane, every lane's workers take from the
 * one cursor, and a cancel reaches the lanes' in-flight episodes like the main thread's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodesetEntry } from '../../src/nodeset-registry/registry.js';
import { playLaneCount, splitWorkers } from '../../src/eval-process/play-lanes.js';
import { runBatch } from '../../src/eval-process/run-batch.js';
import type { RunSpec, RunSummary } from '../../src/store/types.js';
import { makeRun, resultBytes } from './run-helpers.js';

let outputs: string;
beforeAll(async () => {
  outputs = await mkdtemp(join(tmpdir(), 'play-lanes-'));
});
afterAll(async () => {
  await rm(outputs, { recursive: true, force: true });
});

/** Lanes this machine gives a 4-worker run of in-process hosts. */
const LANES = Math.min(4, availableParallelism());

const entry = (name: string, inProcess?: true | 'thread'): NodesetEntry =>
  ({
    name,
    dir: `/nodesets/${name}`,
    manifest: { name, module: 'index.js', parallelism: 'replicated', ...(inProcess ? { inProcess } : {}) },
  }) as unknown as NodesetEntry;

describe('playLaneCount', () => {
  const base = { used: [entry('env', true), entry('model', true)], lent: {}, env: undefined, workers: 8, cores: 4, stepEvents: false };

  it('gives a run of hosts on the eval thread one lane per core, up to its workers', () => {
    expect(playLaneCount(base)).toBe(4);
    expect(playLaneCount({ ...base, workers: 3 })).toBe(3);
    expect(playLaneCount({ ...base, env: { EVAL_PLAY_LANES: '2' } })).toBe(2);
    // A host the server lends is called by URL from every lane, whatever it runs in.
    expect(playLaneCount({ ...base, used: [entry('env', true), entry('model')], lent: { model: 'http://127.0.0.1:1' } })).toBe(4);
  });

  it('keeps one lane where a lane would not help or cannot follow', () => {
    expect(playLaneCount({ ...base, workers: 1 })).toBe(1);
    expect(playLaneCount({ ...base, cores: 1 })).toBe(1);
    expect(playLaneCount({ ...base, used: [entry('env', 'thread'), entry('model', true)] })).toBe(1);
    expect(playLaneCount({ ...base, used: [entry('env'), entry('model', true)] })).toBe(1);
    expect(playLaneCount({ ...base, stepEvents: true })).toBe(1);
    expect(playLaneCount({ ...base, env: { EVAL_PLAY_LANES: '1' } })).toBe(1);
    expect(playLaneCount({ ...base, env: { EVAL_IN_PROCESS_HOSTS: '0' } })).toBe(1);
  });

  it('splits the workers as evenly as they go', () => {
    expect(splitWorkers(8, 3)).toEqual([2, 3, 3]);
    expect(splitWorkers(3, 2)).toEqual([1, 2]);
    expect(splitWorkers(16, 16)).toEqual(Array(16).fill(1));
  });
});

/** Cart-pole whose policy waits 2 ms per call, so a cancel finds episodes in flight. */
async function cartpole(
  workerCount: number,
  env: Record<string, string>,
  opts: { signal?: AbortSignal; onEpisodeStart?: (e: { index: number; workerId: number }) => void } = {},
): Promise<{ summary: RunSummary; log: string[] }> {
  const spec: Partial<RunSpec> & Pick<RunSpec, 'graphName' | 'episodeCount'> = {
    graphName: 'cartpole_mlp',
    episodeCount: 16,
    stepBudget: 60,
    workerCount,
    overrides: { policy: { call_overhead_ms: 2 } },
  };
  const { dir } = await makeRun(outputs, spec);
  const log: string[] = [];
  // Every lane starts at once, so each plays however quick the run (otherwise each starts as soon as it is up).
  const summary = await runBatch({ runDir: dir, hostEnv: env, lanesTogether: true, log: (l) => log.push(l), ...opts });
  return { summary, log };
}

describe('a run in play lanes', () => {
  it('gives the records and aggregates of one lane, and every lane plays', async () => {
    const one = await cartpole(4, { EVAL_PLAY_LANES: '1' });
    const lanes = await cartpole(4, {});
    expect(one.summary.status).toBe('COMPLETED');
    expect(lanes.summary.status).toBe('COMPLETED');
    expect(resultBytes(lanes.summary)).toBe(resultBytes(one.summary));
    expect(one.log.some((l) => l.includes('lanes'))).toBe(false);
    if (LANES > 1) {
      const counts = splitWorkers(4, LANES);
      expect(lanes.log).toContain(`playing in ${LANES} lanes (workers ${counts.join(' + ')})`);
      // Workers past lane 0's took episodes from the same cursor.
      expect(lanes.summary.episodes.some((e) => e.workerId >= counts[0]!)).toBe(true);
    }
    expect(new Set(lanes.summary.episodes.map((e) => e.index)).size).toBe(16);
  }, 60_000);

  it('a cancel ends every lane’s in-flight episodes CANCELLED, with a record for each episode started', async () => {
    const controller = new AbortController();
    const started = new Set<number>();
    const firstOfLastLane = splitWorkers(4, LANES)
      .slice(0, -1)
      .reduce((s, n) => s + n, 0);
    const { summary } = await cartpole(
      4,
      {},
      {
        signal: controller.signal,
        onEpisodeStart: ({ index, workerId }) => {
          started.add(index);
          // Once the last lane plays, so the stop reaches a worker thread mid-episode.
          if (workerId >= firstOfLastLane && !controller.signal.aborted) controller.abort(new Error('cancelled by the test'));
        },
      },
    );
    expect(summary.status).toBe('CANCELLED');
    expect(summary.episodes.map((e) => e.index).sort((a, b) => a - b)).toEqual([...started].sort((a, b) => a - b));
    expect(summary.episodes.some((e) => e.status === 'CANCELLED')).toBe(true);
    expect(summary.episodesDone).toBe(started.size);
    expect(started.size).toBeLessThan(16);
  }, 60_000);
});
