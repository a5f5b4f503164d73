/**
 * A run's life with real eval processes: cancel (queued and running), a child killed with
 * SIGKILL, the per-run memory budget, calibration from measured RSS, the in-process path.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ResourceSampler } from '../../src/scheduler/admission/resource-sampler.js';
import { BUILTIN_GRAPHS_DIR, PACKAGE_ROOT } from '../../src/paths.js';
import { readSummary, readSpec } from '../../src/store/run-dir.js';
import { FixedSampler } from '../fixtures/fixed-sampler.js';
import { closeAll, makeScheduler, slow, waitFor, waitForStatus, groupGone } from './harness.js';

afterEach(closeAll);

async function waitForEpisodes(runDir: string, n: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const s = await readSummary(runDir).catch(() => null);
    if (s && s.episodesDone >= n) return;
    if (Date.now() > deadline) throw new Error(`no ${n} episode(s) in ${runDir}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('cancel', () => {
  it('cancels a queued run at once, and a running one through its process group', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler() });
    const release = h.scheduler.acquireInteractiveLock('test');
    const queued = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 });
    const cancelled = await h.scheduler.cancel(queued.runId);
    expect(cancelled).toMatchObject({ status: 'CANCELLED', episodesDone: 0 });
    expect(existsSync(join(h.scheduler.getRunDir(queued.runId), '_DONE'))).toBe(true);
    expect(h.scheduler.queue()).toEqual([]);
    expect(h.scheduler.catalog.getRun(queued.runId)?.status).toBe('CANCELLED');
    release();

    const run = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 4, workerCount: 2, overrides: slow(10) });
    const dir = h.scheduler.getRunDir(run.runId);
    await waitForEpisodes(dir, 1);
    const pgid = h.scheduler.activeJobs()[0]!.pid!;
    expect(groupGone(pgid)).toBe(false);
    await h.scheduler.cancel(run.runId);
    await h.scheduler.cancel(run.runId); // idempotent while cancelling
    const final = await waitForStatus(h, run.runId, 'CANCELLED');
    expect(final.episodes.length).toBeGreaterThanOrEqual(1);
    expect(final.episodes.length).toBe(final.episodesDone);
    await waitFor('the process group to be empty', () => groupGone(pgid), 5000);
    expect(h.scheduler.activeJobs()).toEqual([]);

    // Cancelling a cancelled run answers it again; a run that ended otherwise is a CONFLICT.
    await expect(h.scheduler.cancel(run.runId)).resolves.toMatchObject({ status: 'CANCELLED', error: null });
    const done = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 });
    await waitForStatus(h, done.runId, 'COMPLETED');
    await expect(h.scheduler.cancel(done.runId)).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('COMPLETED') });
    await expect(h.scheduler.cancel('20200101_000000')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(h.scheduler.cancel('../etc')).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});

describe('a retry that ends before it plays', () => {
  it('cancelled while queued, it puts the earlier records back: the run shows every episode it measured', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler() });
    const run = await h.scheduler.submit({
      graphName: 'gridnav_planner',
      episodeCount: 3,
      dataset: 'mini',
      overrides: { env: { crash_at_step: 2 } },
    });
    const first = await waitForStatus(h, run.runId, 'COMPLETED');
    expect(first.statusCounts).toEqual({ CRASHED: 3 });
    const release = h.scheduler.acquireInteractiveLock('test');
    await h.scheduler.retry(run.runId, ['CRASHED']);
    expect((await readSummary(h.scheduler.getRunDir(run.runId))).episodes).toEqual([]);
    const cancelled = await h.scheduler.cancel(run.runId);
    release();
    expect(cancelled).toMatchObject({ status: 'CANCELLED', episodesDone: 3, statusCounts: { CRASHED: 3 } });
    expect(cancelled.episodes).toEqual(first.episodes);
    expect(await readSummary(h.scheduler.getRunDir(run.runId))).toEqual(cancelled);
    expect(h.scheduler.catalog.getRun(run.runId)).toMatchObject({ status: 'CANCELLED', episodesDone: 3 });
  });
});

describe('one cancel, one story', () => {
  it('ends a run cancelled while queued, starting, just spawned or running CANCELLED with no error', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler() });
    const input = { graphName: 'gridnav_planner', episodeCount: 6, workerCount: 2, overrides: slow(10) };
    const ids: string[] = [];
    // Queued: held back by the interactive lock.
    const release = h.scheduler.acquireInteractiveLock('test');
    ids.push((await h.scheduler.submit(input)).runId);
    await h.scheduler.cancel(ids[0]!);
    release();
    // Starting: the moment its summary says RUNNING, before its eval process exists.
    const starting = await h.scheduler.submit(input);
    ids.push(starting.runId);
    await new Promise<void>((resolve, reject) => {
      const off = h.scheduler.subscribe((e) => {
        if (e.type !== 'run' || e.runId !== starting.runId || e.summary.status !== 'RUNNING') return;
        off();
        h.scheduler.cancel(starting.runId).then(() => resolve(), reject);
      });
    });
    // Just spawned: the eval process has a pid but may not have set up its signal handlers yet.
    const spawned = await h.scheduler.submit(input);
    ids.push(spawned.runId);
    await waitFor(
      'the eval process to be spawned',
      () => h.scheduler.activeJobs().find((j) => j.runId === spawned.runId && j.pid !== null),
      30_000,
    );
    await h.scheduler.cancel(spawned.runId);
    // Running: after its first episode.
    const running = await h.scheduler.submit(input);
    ids.push(running.runId);
    await waitForEpisodes(h.scheduler.getRunDir(running.runId), 1);
    await h.scheduler.cancel(running.runId);

    for (const id of ids) {
      const final = await waitForStatus(h, id, ['CANCELLED', 'ABORTED', 'FAILED', 'COMPLETED']);
      expect({ id, status: final.status, error: final.error }).toEqual({ id, status: 'CANCELLED', error: null });
      expect(final.episodes.filter((e) => e.status === 'CRASHED')).toEqual([]);
      expect(await readSummary(h.scheduler.getRunDir(id))).toEqual(final);
      expect(h.scheduler.catalog.getRun(id)).toMatchObject({ status: 'CANCELLED', error: null });
    }
  });

  it('answers a repeated cancel the same way whatever stage the stop has reached', async () => {
    const lingering = join(PACKAGE_ROOT, 'test', 'fixtures', 'lingering-eval.mjs');
    const h = await makeScheduler({ sampler: new FixedSampler(), evalProcessMain: lingering, cancelGraceMs: 120_000 });
    const run = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 });
    const dir = h.scheduler.getRunDir(run.runId);
    const job = await waitFor('the stand-in to be up', async () => {
      const active = h.scheduler.activeJobs().find((j) => j.pid !== null);
      return active && (await readSummary(dir)).pid === active.pid ? active : undefined;
    });
    await h.scheduler.cancel(run.runId);
    await waitFor('the stand-in to write its CANCELLED summary', async () => (await readSummary(dir)).status === 'CANCELLED');
    // Its final summary is written but its process has not exited: the scheduler still runs it.
    expect(h.scheduler.activeJobs().map((j) => j.runId)).toEqual([run.runId]);
    await expect(h.scheduler.cancel(run.runId)).resolves.toMatchObject({ status: 'CANCELLED' });
    process.kill(job.pid!, 'SIGUSR2');
    await waitFor(
      'the scheduler to finish the run',
      () => h.scheduler.activeJobs().length === 0 && h.scheduler.catalog.getRun(run.runId)?.status === 'CANCELLED',
    );
    await expect(h.scheduler.cancel(run.runId)).resolves.toMatchObject({ status: 'CANCELLED' });
  });
});

describe('reap', () => {
  it('marks a child killed with SIGKILL aborted, keeping the episodes it finished', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler() });
    const run = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 4, overrides: slow(10) });
    const dir = h.scheduler.getRunDir(run.runId);
    await waitForEpisodes(dir, 1);
    const before = await readSummary(dir);
    const pid = h.scheduler.activeJobs()[0]!.pid!;
    process.kill(pid, 'SIGKILL');
    const final = await waitForStatus(h, run.runId, 'ABORTED');
    expect(final.error).toMatchObject({ code: 'ABORTED', message: expect.stringContaining('SIGKILL') });
    expect(final.episodes.length).toBeGreaterThanOrEqual(before.episodes.length);
    expect(final.episodes.length).toBeGreaterThanOrEqual(1);
    expect(final.seq).toBeGreaterThan(before.seq);
    expect(final.finishedAt).not.toBeNull();
    expect(existsSync(join(dir, '_DONE'))).toBe(true);
    expect(await readSummary(dir)).toEqual(final);
    await waitFor('the process group to be empty', () => groupGone(pid), 5000);
    expect(h.scheduler.catalog.getRun(run.runId)).toMatchObject({ status: 'ABORTED', episodesDone: final.episodesDone });
  });

  it('stops a run whose process tree exceeds its memory budget and marks it FAILED, partial results kept', async () => {
    const sampler = new FixedSampler();
    const h = await makeScheduler({ sampler, rssSampleIntervalMs: 100 });
    const run = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 4, memoryBudgetMb: 1000, overrides: slow(10) });
    const dir = h.scheduler.getRunDir(run.runId);
    await waitForEpisodes(dir, 1);
    sampler.rssMb = 1500;
    const final = await waitForStatus(h, run.runId, 'FAILED');
    expect(final.error).toMatchObject({
      code: 'OUT_OF_BUDGET',
      message: expect.stringMatching(/1500 MB, over its memory budget of 1000 MB/),
    });
    expect(final.episodes.length).toBeGreaterThanOrEqual(1);
  });

  it('measures the real process tree: a tiny budget fails, and a completed run calibrates the next estimate', async () => {
    const h = await makeScheduler({ sampler: new ResourceSampler(), rssSampleIntervalMs: 100 });
    const tight = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 3, memoryBudgetMb: 5, overrides: slow(10) });
    const failed = await waitForStatus(h, tight.runId, 'FAILED');
    expect(failed.error?.code).toBe('OUT_OF_BUDGET');

    const ok = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 2, workerCount: 2, overrides: slow(20) });
    await waitForStatus(h, ok.runId, 'COMPLETED');
    const peak = h.scheduler.catalog.calibratedPeak('gridnav_planner', 2);
    // Node plus two env hosts: tens of MB each, far from zero and far from gigabytes.
    expect(peak).toBeGreaterThan(60);
    expect(peak).toBeLessThan(2000);
    // CPU time over wall time of the tree: a latency-bound run keeps well under 2 cores (1 per worker) busy.
    const cores = h.scheduler.catalog.calibratedCores('gridnav_planner', 2);
    expect(cores).toBeGreaterThan(0);
    expect(cores).toBeLessThan(2);
    h.scheduler.acquireInteractiveLock('inspect');
    await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 2, workerCount: 2 });
    expect(h.scheduler.queue()[0]!.estimate).toEqual({
      ramMb: peak,
      vramMb: 0,
      source: 'calibrated',
      cores: Math.ceil(cores! * 10 - 1e-9) / 10,
      coresSource: 'calibrated',
    });
  });
});

describe('in-process runs', () => {
  it('runs viaSubprocess:false inside the backend with the same results as an eval process', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler() });
    const sub = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 3, seed: 7 });
    const inproc = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 3, seed: 7, viaSubprocess: false });
    await waitFor('the in-process run to be active', () =>
      h.scheduler.activeJobs().find((j) => j.runId === inproc.runId && !j.viaSubprocess && j.pid === null),
    );
    const [a, b] = await Promise.all([waitForStatus(h, sub.runId, 'COMPLETED'), waitForStatus(h, inproc.runId, 'COMPLETED')]);
    expect(b.aggregateMetrics).toEqual(a.aggregateMetrics);
    expect(b.episodes.map((e) => e.metrics)).toEqual(a.episodes.map((e) => e.metrics));
    expect(h.scheduler.catalog.getRun(inproc.runId)).toMatchObject({ status: 'COMPLETED', viaSubprocess: false });
  });

  it('cancels an in-process run through its AbortController', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler() });
    const run = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 4, viaSubprocess: false, overrides: slow(10) });
    await waitForEpisodes(h.scheduler.getRunDir(run.runId), 1);
    await h.scheduler.cancel(run.runId);
    const final = await waitForStatus(h, run.runId, 'CANCELLED');
    expect(final.episodesDone).toBeGreaterThanOrEqual(1);
  });
});

describe('workspace overlay', () => {
  it('runs a graph that only the active workspace has, in the eval process too', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'sched-ws-'));
    try {
      mkdirSync(join(ws, 'graphs'));
      const graph = JSON.parse(readFileSync(join(BUILTIN_GRAPHS_DIR, 'gridnav_planner.json'), 'utf8')) as { name: string };
      writeFileSync(join(ws, 'graphs', 'ws_only.json'), JSON.stringify({ ...graph, name: 'ws_only' }));
      const plain = await makeScheduler({ sampler: new FixedSampler() });
      await expect(plain.scheduler.submit({ graphName: 'ws_only', episodeCount: 1 })).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });

      const h = await makeScheduler({ sampler: new FixedSampler(), workspaceDir: ws });
      const run = await h.scheduler.submit({ graphName: 'ws_only', episodeCount: 1 });
      expect((await readSpec(h.scheduler.getRunDir(run.runId))).activeWorkspaceDir).toBe(ws);
      const done = await waitForStatus(h, run.runId, 'COMPLETED');
      expect(done.graphName).toBe('ws_only');
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
