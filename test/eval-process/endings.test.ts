/**
 * Every way an episode can end yields a full record with the steps and metrics measured up
 * to that point. Real hosts, in-process runBatch.
 */
import { IN_PROCESS_ENV } from '../../src/eval-process/in-process-host.js';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBatch, type RunBatchOptions } from '../../src/eval-process/run-batch.js';
import { episodeDir, isDone } from '../../src/store/run-dir.js';
import { existsSync } from 'node:fs';
import type { RunSpec } from '../../src/store/types.js';
import { gridnavGraph, isAlive, makeRun, waitFor, writeWorkspaceGraph } from './run-helpers.js';

let tmp: string;
let workspace: string;
let outputs: string;
const pids: number[] = [];

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'endings-'));
  workspace = join(tmp, 'ws');
  outputs = join(tmp, 'outputs');
});
afterEach(async () => {
  for (const pid of pids.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  await rm(tmp, { recursive: true, force: true });
});

async function runGraph(
  graph: ReturnType<typeof gridnavGraph>,
  spec: Partial<RunSpec> & { episodeCount: number },
  extra: Partial<RunBatchOptions> = {},
) {
  await writeWorkspaceGraph(workspace, graph);
  const { dir } = await makeRun(outputs, { graphName: graph.name, activeWorkspaceDir: workspace, ...spec });
  const summary = await runBatch({
    runDir: dir,
    onHostStarted: (h) => pids.push(h.pid),
    ...extra,
  });
  expect(isDone(dir)).toBe(true);
  for (const pid of pids) expect(isAlive(pid) ? await waitFor(() => !isAlive(pid), 3000) : true).toBe(true);
  return { summary, dir };
}

describe('episode endings', () => {
  it('COMPLETED: the env said done and metrics were harvested; the episode folder holds log, asset and record', async () => {
    const { summary, dir } = await runGraph(gridnavGraph('g_completed'), { episodeCount: 2, dataset: 'mini' });
    expect(summary.status).toBe('COMPLETED');
    const ep = summary.episodes[0]!;
    expect(ep.status).toBe('COMPLETED');
    expect(ep.episodeId).toBe('mini/val/0');
    expect(ep.metrics).toMatchObject({ success: expect.anything(), spl: expect.any(Number), distance_to_goal: expect.any(Number) });
    expect(ep.steps).toBeGreaterThan(0);
    const epDir = join(dir, 'episodes', 'ep0000');
    expect(JSON.parse(await readFile(join(epDir, 'episode.json'), 'utf8'))).toEqual(ep);
    const log = (await readFile(join(epDir, 'log.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { step: number; nodeId: string });
    // One firing per node per iteration, nothing from any other episode.
    for (const node of ['env', 'agent']) expect(log.filter((l) => l.nodeId === node).length).toBe(ep.steps);
    expect(Math.max(...log.map((l) => l.step))).toBe(ep.steps - 1);
    expect(await readdir(join(epDir, 'assets'))).toEqual(ep.assets.map((a) => a.name));
    expect(ep.assets[0]?.mime).toBe('image/png');
  });

  it("an episode plays on while its assets are written, but its record goes out only once they are on disk; a live viewer finds each step's asset there", async () => {
    /** Whether each asset a callback names is on disk at the time of the call. */
    const check = async (graph: ReturnType<typeof gridnavGraph>, watch: 'written' | 'step') => {
      await writeWorkspaceGraph(workspace, graph);
      const { dir } = await makeRun(outputs, {
        graphName: graph.name,
        activeWorkspaceDir: workspace,
        episodeCount: watch === 'step' ? 1 : 3,
        dataset: 'mini',
      });
      const onDisk: boolean[] = [];
      const seen = (index: number, name: string | undefined) =>
        onDisk.push(name !== undefined && existsSync(join(episodeDir(dir, index), 'assets', name)));
      const summary = await runBatch({
        runDir: dir,
        onHostStarted: (h) => pids.push(h.pid),
        ...(watch === 'written'
          ? {
              onEpisodeWritten: (record) => {
                for (const a of record.assets) seen(record.index, a.name);
              },
            }
          : {
              onStep: (event, episode) =>
                seen(episode.index, (event.outputs.env?.trajectory as { $assetRef?: string } | undefined)?.$assetRef),
            }),
      });
      expect(summary.status).toBe('COMPLETED');
      return { onDisk, summary };
    };
    // Each of the three episodes ends with its trajectory, written before the record is reported.
    const written = await check(gridnavGraph('g_assets_written'), 'written');
    expect(written.onDisk).toEqual([true, true, true]);
    // A live viewer (a step listener) sees every step's render, already on disk.
    const live = await check(gridnavGraph('g_assets_live', { envConfig: { render_every_step: true } }), 'step');
    expect(live.onDisk.length).toBe(live.summary.episodes[0]!.steps);
    expect(live.onDisk.every(Boolean)).toBe(true);
  });

  it('BUDGET_EXHAUSTED: the API budget ran out, partial metrics kept', async () => {
    const { summary } = await runGraph(gridnavGraph('g_budget'), { episodeCount: 1, stepBudget: 3 });
    const ep = summary.episodes[0]!;
    expect(ep).toMatchObject({
      status: 'BUDGET_EXHAUSTED',
      steps: 3,
      stepBudget: 3,
      error: 'the step budget of 3 step(s) ran out before any node said done',
    });
    expect(ep.metrics.steps).toBeGreaterThan(0);
    expect(ep.metrics.distance_to_goal).toBeGreaterThan(0);
    expect(summary.status).toBe('COMPLETED');
  });

  it('TIMEOUT: the wall-clock limit (budget × per-step seconds) passed, partial metrics kept, the summary flags it', async () => {
    const { summary } = await runGraph(gridnavGraph('g_timeout', { envConfig: { step_latency_ms: 40 } }), {
      episodeCount: 1,
      stepBudget: 20,
      perStepTimeoutSec: 0.02,
    });
    const ep = summary.episodes[0]!;
    expect(ep.status).toBe('TIMEOUT');
    expect(ep.error).toContain('400 ms');
    expect(ep.steps).toBeGreaterThan(0);
    expect(ep.steps).toBeLessThan(20);
    expect(Object.keys(ep.metrics)).toContain('distance_to_goal');
    expect(summary.timedOut).toBe(true);
  });

  it("the graph's per_step_timeout_sec is the limit when the run sets none; the run's own perStepTimeoutSec wins over it", async () => {
    const graph = { ...gridnavGraph('g_graph_timeout', { envConfig: { step_latency_ms: 40 } }), per_step_timeout_sec: 0.02 };
    const byGraph = (await runGraph(graph, { episodeCount: 1, stepBudget: 20 })).summary.episodes[0]!;
    expect(byGraph.status).toBe('TIMEOUT');
    expect(byGraph.error).toContain('400 ms');
    const byRun = (await runGraph(graph, { episodeCount: 1, stepBudget: 3, perStepTimeoutSec: 5 })).summary.episodes[0]!;
    expect(byRun.status).toBe('BUDGET_EXHAUSTED');
  });

  it('TIMEOUT at once: a frozen env host (SIGSTOP) ends its episode at the per-call limit, not at budget × per-step; the host is replaced', async () => {
    const envHosts = new Map<string, number>();
    let frozen: number | undefined;
    let frozenAt = 0;
    try {
      const { summary } = await runGraph(
        gridnavGraph('g_frozen', { envConfig: { step_latency_ms: 5 } }),
        // The episode's whole allowance is 300 × 2 s = 600 s; one call may wait 1 s.
        { episodeCount: 4, workerCount: 2, dataset: 'mini', stepBudget: 300, perStepTimeoutSec: 2, perCallTimeoutSec: 1 },
        {
          // Env hosts as processes of their own, so there is one to freeze (a thread host shares this process's pid).
          hostEnv: { [IN_PROCESS_ENV]: '0' },
          onHostStarted: (h) => {
            pids.push(h.pid);
            if (h.nodeset === 'env_gridnav' && h.tag !== null) envHosts.set(h.tag, h.pid);
          },
          onStep: (event, episode) => {
            if (frozen === undefined && episode.index === 0 && event.step === 2) {
              // The worker that plays episode 0 (the costliest episodes go first, so it need not be worker 0).
              frozen = envHosts.get(String(episode.workerId));
              frozenAt = performance.now();
              process.kill(frozen!, 'SIGSTOP');
            }
          },
        },
      );
      expect(frozen).toBeDefined();
      const ep = summary.episodes[0]!;
      expect(ep.status).toBe('TIMEOUT');
      expect(ep.error).toMatch(/node "env" got no answer within the per-call limit of 1000 ms \(step 3\)/);
      expect(ep.steps).toBe(3);
      expect(Object.keys(ep.metrics)).toContain('distance_to_goal');
      expect(ep.durationMs).toBeLessThan(20_000);
      // Its worker carried on with a new host: the run's other episodes all finished.
      expect(summary.episodes.slice(1).map((e) => e.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
      expect(summary.timedOut).toBe(true);
      expect(performance.now() - frozenAt).toBeLessThan(60_000);
    } finally {
      if (frozen !== undefined && isAlive(frozen)) {
        process.kill(frozen, 'SIGCONT');
        process.kill(frozen, 'SIGKILL');
      }
    }
  }, 90_000);

  it('ERROR: a node failed; the record names it and keeps the metrics of the steps before', async () => {
    const { summary } = await runGraph(gridnavGraph('g_error', { envConfig: { fail_at_step: 3 } }), { episodeCount: 1 });
    const ep = summary.episodes[0]!;
    expect(ep.status).toBe('ERROR');
    expect(ep.error).toContain('"env"');
    expect(ep.nodeErrors?.[0]).toMatchObject({ nodeId: 'env', step: 3 });
    expect(ep.steps).toBeGreaterThanOrEqual(3);
    // The env's last good output (after step 2) is what the sink holds.
    expect(ep.metrics.steps).toBe(2);
  });

  it('NO_VERDICT: the episode finished but no graphOut received a metric', async () => {
    const { summary } = await runGraph(gridnavGraph('g_noverdict', { sink: 'image' }), { episodeCount: 1, dataset: 'mini' });
    const ep = summary.episodes[0]!;
    expect(ep.status).toBe('NO_VERDICT');
    expect(ep.metrics).toEqual({});
    expect(ep.steps).toBeGreaterThan(0);
    expect(summary.aggregateMetrics).toEqual([]);
  });

  it('CRASHED: the env host died; partial metrics kept, and the host is respawned for the next episode', async () => {
    const { summary } = await runGraph(gridnavGraph('g_crash', { envConfig: { crash_at_step: 2 } }), { episodeCount: 2 });
    expect(summary.status).toBe('COMPLETED');
    for (const ep of summary.episodes) {
      // The second episode reaching step 2 again proves the worker got a fresh host.
      expect(ep.status).toBe('CRASHED');
      expect(ep.steps).toBe(2);
      expect(ep.metrics.steps).toBe(1);
      expect(ep.error).toMatch(/env_gridnav|host/);
    }
  });

  it('CANCELLED: cancel mid-run stops dispatch, ends the in-flight episodes with partial metrics, keeps finished ones', async () => {
    const controller = new AbortController();
    // Cancel once an episode has finished and worker 1 is a few steps into one it has not finished.
    let finished = false;
    const { summary } = await runGraph(
      gridnavGraph('g_cancel', { envConfig: { step_latency_ms: 10 } }),
      { episodeCount: 12, workerCount: 2, dataset: 'mini' },
      {
        signal: controller.signal,
        onEpisode: () => {
          finished = true;
        },
        onStep: (event, episode) => {
          // Not at a step that ends its episode: that episode would end COMPLETED, not in flight.
          if (finished && episode.workerId === 1 && event.step >= 3 && event.outputs.env?.done !== true)
            controller.abort(new Error('test cancel'));
        },
      },
    );
    expect(summary.status).toBe('CANCELLED');
    expect(summary.finishedAt).not.toBeNull();
    const statuses = summary.episodes.map((e) => e.status);
    expect(statuses).toContain('COMPLETED');
    expect(statuses).toContain('CANCELLED');
    expect(summary.episodesDone).toBeLessThan(12);
    const cancelled = summary.episodes.filter((e) => e.status === 'CANCELLED');
    expect(cancelled.some((e) => e.steps > 0 && Object.keys(e.metrics).length > 0)).toBe(true);
    // Cancelled episodes are kept in the record but left out of the aggregates.
    const completed = summary.episodes.filter((e) => e.status === 'COMPLETED').length;
    expect(summary.aggregateMetrics.find((m) => m.name === 'spl')?.count).toBe(completed);
  });

  it('refuses an invalid graph: the run FAILED with the validation message, _DONE written, nothing started', async () => {
    const bad = gridnavGraph('g_bad');
    bad.nodes[1]!.type = 'planner__nope';
    const { summary } = await runGraph(bad, { episodeCount: 2 });
    expect(summary.status).toBe('FAILED');
    expect(summary.error?.code).toBe('GRAPH_INVALID');
    expect(summary.error?.message).toContain('planner__nope');
    expect(summary.episodes).toEqual([]);
    expect(pids).toEqual([]);
  });
});
