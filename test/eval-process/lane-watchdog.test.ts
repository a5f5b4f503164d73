/**
 * An env step that never returns, synchronously, on a thread: on a play lane (the env on the
 * lane's own thread) the main thread ends the lane once it has been held past the per-call
 * limit and starts it again; in a thread host the per-call limit ends the episode and the host's
 * thread is ended and replaced. Either way that episode ends TIMEOUT and the run plays the rest.
 */
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IN_PROCESS_ENV } from '../../src/eval-process/in-process-host.js';
import { runBatch } from '../../src/eval-process/run-batch.js';
import type { GraphSpec } from '../../src/core/types.js';
import { makeRun, writeWorkspaceGraph } from './run-helpers.js';

const HANG_FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'nodesets', 'hang');

let tmp: string;
let workspace: string;
let marker: string;

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'lane-watchdog-'));
  workspace = join(tmp, 'ws');
  marker = join(tmp, 'hung-once');
  await cp(HANG_FIXTURE, join(workspace, 'graph_nodes', 'hang'), { recursive: true });
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** `stepMs`: each step waits so long, so the other lane still has work when the held one is started again. */
function hangGraph(name: string, stepMs: number): GraphSpec {
  return {
    name,
    step_budget: 10,
    nodes: [
      { id: 'env', type: 'hang__step', config: { hang_once: marker, step_ms: stepMs } },
      { id: 'agent', type: 'hang__act' },
      { id: 'result', type: 'graphOut' },
    ],
    edges: [
      { from: 'env.observation', to: 'agent.observation' },
      { from: 'agent.action', to: 'env.action', loop: true },
      { from: 'env.metrics', to: 'result.metrics' },
    ],
  };
}

async function play(graphName: string, workerCount: number, hostEnv: Record<string, string>, stepMs = 0) {
  await writeWorkspaceGraph(workspace, hangGraph(graphName, stepMs));
  const { dir } = await makeRun(join(tmp, 'outputs'), {
    graphName,
    activeWorkspaceDir: workspace,
    episodeCount: 10,
    workerCount,
    perCallTimeoutSec: 1.5,
  });
  const log: string[] = [];
  const summary = await runBatch({ runDir: dir, hostEnv, lanesTogether: true, log: (l) => log.push(l) });
  // The hang happened, once, in the episode the marker names.
  expect(existsSync(marker)).toBe(true);
  const hungEpisode = Number(await readFile(marker, 'utf8'));
  return { summary, log, hungEpisode, dir };
}

describe('a step that never returns on a thread', () => {
  it('on a play lane: the lane is ended and started again, that episode ends TIMEOUT, the run plays the rest', async () => {
    const { summary, log, hungEpisode, dir } = await play('hang_lane', 2, { [IN_PROCESS_ENV]: 'hang' }, 100);
    expect(log).toContain('playing in 2 lanes (workers 1 + 1)');
    expect(summary.status).toBe('COMPLETED');
    expect(summary.episodes.map((e) => e.index)).toEqual([...Array(10).keys()]);
    const timedOut = summary.episodes.filter((e) => e.status === 'TIMEOUT');
    expect(timedOut.map((e) => e.index)).toEqual([hungEpisode]);
    expect(timedOut[0]).toMatchObject({ workerId: 1, error: expect.stringContaining("play lane 1's thread was held") });
    expect(summary.episodes.filter((e) => e.status === 'COMPLETED')).toHaveLength(9);
    expect(log.some((l) => l.startsWith('play lane 1 started again'))).toBe(true);
    // The record is on disk with the others.
    const onDisk = JSON.parse(await readFile(join(dir, 'episodes', `ep${String(hungEpisode).padStart(4, '0')}`, 'episode.json'), 'utf8'));
    expect(onDisk).toEqual(timedOut[0]);
  });

  it('in a thread host: the per-call limit ends the episode TIMEOUT, the host thread is replaced, the run plays the rest', async () => {
    const { summary, hungEpisode } = await play('hang_thread', 1, { [IN_PROCESS_ENV]: '' });
    expect(summary.status).toBe('COMPLETED');
    expect(summary.episodes).toHaveLength(10);
    const timedOut = summary.episodes.filter((e) => e.status === 'TIMEOUT');
    expect(timedOut.map((e) => e.index)).toEqual([hungEpisode]);
    expect(timedOut[0]!.error).toContain('per-call limit');
    // Its partial record: the step before the hang was measured.
    expect(timedOut[0]!.steps).toBe(1);
    expect(summary.episodes.filter((e) => e.status === 'COMPLETED')).toHaveLength(9);
  });
});
