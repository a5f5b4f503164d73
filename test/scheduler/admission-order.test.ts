/**
 * Admission with real eval processes: priority, FIFO, skip-not-block, the anti-starvation
 * reservation, exclusive GPU runs, the interactive lock, the static ledger, queue capacity.
 * A FixedSampler makes the machine as small as each case needs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FixedSampler } from '../fixtures/fixed-sampler.js';
import { closeAll, makeScheduler, slow, waitFor, waitForStatus } from './harness.js';

afterEach(closeAll);

/** gridnav_planner at one worker: the eval process base plus one env_gridnav host (see estimate.ts). */
const ONE_WORKER_MB = 200;

describe('admission order', () => {
  it('starts higher priority first and FIFO within a priority, and nothing while the interactive lock is held', async () => {
    const sampler = new FixedSampler({ ramFreeMb: ONE_WORKER_MB + 100 });
    const h = await makeScheduler({ sampler });
    const release = h.scheduler.acquireInteractiveLock('play');
    const a = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1, priority: 0 });
    const b = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1, priority: 0 });
    const c = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1, priority: 2 });
    expect(a.status).toBe('QUEUED');

    await h.scheduler.tick();
    await new Promise((r) => setTimeout(r, 300));
    expect(h.started).toEqual([]);
    const q = h.scheduler.queue();
    expect(q.map((e) => e.runId)).toEqual([c.runId, a.runId, b.runId]);
    expect(q.map((e) => e.position)).toEqual([1, 2, 3]);
    for (const e of q) expect(e.waitingReason).toBe("interactive session 'play' holds the lock");
    expect(h.scheduler.resources().interactiveLockHolder).toBe('play');

    release();
    await waitForStatus(h, b.runId, 'COMPLETED', 45_000);
    expect(h.started).toEqual([c.runId, a.runId, b.runId]);
    for (const id of [a.runId, c.runId]) expect(h.last.get(id)?.status).toBe('COMPLETED');
  });

  it('skips a job that does not fit instead of blocking the ones behind it', async () => {
    const sampler = new FixedSampler({ ramFreeMb: 500 });
    const h = await makeScheduler({ sampler });
    const big = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 8, workerCount: 8 });
    const small = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1, overrides: slow(20) });
    await waitForStatus(h, small.runId, 'RUNNING');
    await h.scheduler.tick();
    const waiting = h.scheduler.queue();
    expect(waiting.map((e) => e.runId)).toEqual([big.runId]);
    expect(waiting[0]!.estimate.ramMb).toBe(760);
    // 500 MB measured free, less the 200 MB the running small job has reserved and not yet used.
    expect(waiting[0]!.waitingReason).toBe('needs 760 MB RAM, 300 MB free after reservations');
    expect(h.started).toEqual([small.runId]);

    sampler.ramFreeMb = 4000;
    await waitForStatus(h, big.runId, ['RUNNING', 'COMPLETED']);
    await h.scheduler.cancel(big.runId).catch(() => {});
  });

  it('lets a job that waited past starvationMs reserve its resources so smaller jobs cannot overtake it forever', async () => {
    const sampler = new FixedSampler({ ramFreeMb: 900 });
    const h = await makeScheduler({ sampler, starvationMs: 300 });
    const s1 = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 2, overrides: slow(100) });
    await waitForStatus(h, s1.runId, 'RUNNING');
    const big = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 8, workerCount: 8, overrides: slow(100) });
    await waitFor('the big job to reserve', () => h.scheduler.queue().find((e) => e.runId === big.runId && e.reserving));
    // Without the reservation this one would fit now: 900 − 200 (running) ≥ 200.
    const s2 = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 });
    await h.scheduler.tick();
    await h.scheduler.tick();
    const s2Entry = h.scheduler.queue().find((e) => e.runId === s2.runId);
    expect(s2Entry?.waitingReason).toMatch(/^behind 1 earlier job holding their reservation \(needs 200 MB RAM, /);
    expect(h.started).toEqual([s1.runId]);

    await h.scheduler.cancel(s1.runId);
    await waitForStatus(h, big.runId, 'RUNNING');
    // The big job now holds 760 of 900 MB: the small one still waits.
    await h.scheduler.tick();
    expect(h.scheduler.queue().map((e) => e.runId)).toEqual([s2.runId]);
    await h.scheduler.cancel(big.runId);
    await waitForStatus(h, s2.runId, ['RUNNING', 'COMPLETED']);
    expect(h.started).toEqual([s1.runId, big.runId, s2.runId]);
  });

  it('runs an exclusive GPU job alone, both ways', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler() });
    const ex = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 3, exclusiveGpu: true, overrides: slow(50) });
    await waitForStatus(h, ex.runId, 'RUNNING');
    const other = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 3, overrides: slow(50) });
    await h.scheduler.tick();
    expect(h.scheduler.queue()[0]).toMatchObject({ runId: other.runId, waitingReason: `exclusive GPU run ${ex.runId} is running` });

    await h.scheduler.cancel(ex.runId);
    await waitForStatus(h, other.runId, 'RUNNING');
    const ex2 = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1, exclusiveGpu: true });
    await h.scheduler.tick();
    expect(h.scheduler.queue()[0]).toMatchObject({ runId: ex2.runId, waitingReason: 'needs the GPU to itself; 1 run still running' });
    expect(h.scheduler.activeJobs().map((j) => j.runId)).toEqual([other.runId]);

    await h.scheduler.cancel(other.runId);
    await waitForStatus(h, ex2.runId, ['RUNNING', 'COMPLETED']);
    expect(h.started).toEqual([ex.runId, other.runId, ex2.runId]);
  });

  it('keeps a static ledger for VRAM where it cannot be measured', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler(), staticCapacity: { vramMb: 1000 } });
    await expect(h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1, marginalVramMb: 1500 })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      message: expect.stringContaining('marginalVramMb'),
    });
    const a = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 3, marginalVramMb: 600, overrides: slow(50) });
    await waitForStatus(h, a.runId, 'RUNNING');
    const b = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1, marginalVramMb: 600 });
    await h.scheduler.tick();
    expect(h.scheduler.queue()[0]).toMatchObject({
      runId: b.runId,
      waitingReason: 'needs 600 MB VRAM, 400 MB free in the static ledger',
      estimate: { vramMb: 600, source: 'declared' },
    });
    expect(h.scheduler.resources()).toMatchObject({ vramMeasured: false, vramTotalMb: 1000, vramFreeMb: 400, reservedVramMb: 600 });

    await h.scheduler.cancel(a.runId);
    await waitForStatus(h, b.runId, ['RUNNING', 'COMPLETED']);
  });

  it('counts CPU cores: two runs that together need more cores than the machine has do not start together', async () => {
    // A 4-core machine; a CPU-bound gridnav_planner (step_compute_ms: env_gridnav in a thread per worker) needs 1 core per
    // worker (env_gridnav declares none: the default 1).
    const h = await makeScheduler({ sampler: new FixedSampler(), cores: 4 });
    const compute = { env: { step_compute_ms: 1 } };
    const a = await h.scheduler.submit({
      graphName: 'gridnav_planner',
      episodeCount: 3,
      workerCount: 3,
      overrides: { env: { ...slow(50).env, ...compute.env } },
    });
    await waitForStatus(h, a.runId, 'RUNNING');
    const b = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 3, workerCount: 3, overrides: compute });
    // More workers than episodes: estimated (and run) as 2 workers, 2 cores.
    const c = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 2, workerCount: 16, overrides: compute });
    await h.scheduler.tick();
    const queue = h.scheduler.queue();
    expect(queue.map((e) => e.runId)).toEqual([b.runId, c.runId]);
    expect(queue[0]).toMatchObject({ waitingReason: 'needs 3 cores, 1 free', estimate: { cores: 3, coresSource: 'declared' } });
    expect(queue[1]).toMatchObject({ waitingReason: 'needs 2 cores, 1 free', estimate: { cores: 2, ramMb: 280 } });
    expect(h.scheduler.activeJobs().map((j) => j.reservation.cores)).toEqual([3]);
    // A latency-bound run plays its env on the eval process's thread: one core for all 3 workers, so it fits beside a.
    const d = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 3, workerCount: 3, overrides: slow(5) });
    await h.scheduler.tick();
    expect(Object.fromEntries(h.scheduler.activeJobs().map((j) => [j.runId, j.reservation.cores]))).toEqual({ [a.runId]: 3, [d.runId]: 1 });
    expect(h.scheduler.queue().map((e) => e.runId)).toEqual([b.runId, c.runId]);

    await h.scheduler.cancel(a.runId);
    await waitForStatus(h, b.runId, ['RUNNING', 'COMPLETED']);
    expect(h.started.slice(0, 3)).toEqual([a.runId, d.runId, b.runId]);
    await waitForStatus(h, c.runId, 'COMPLETED');
  });

  it('refuses submissions past the queue capacity with QUEUE_FULL naming it', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler(), queueCapacity: 2 });
    h.scheduler.acquireInteractiveLock('test');
    const a = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 });
    await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 });
    await expect(h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 })).rejects.toMatchObject({
      code: 'QUEUE_FULL',
      capacity: 2,
      message: expect.stringContaining('capacity 2'),
    });
    await h.scheduler.cancel(a.runId);
    await expect(h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 })).resolves.toMatchObject({ status: 'QUEUED' });
  });

  it('checks every submitted field and names the bad one', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler() });
    const bad = async (input: Record<string, unknown>, field: string) =>
      expect(h.scheduler.submit(input as never)).rejects.toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringContaining(field) });
    await bad({ graphName: 'no_such_graph', episodeCount: 1 }, 'no_such_graph');
    await bad({ graphName: 'gridnav_planner', episodeCount: 0 }, 'episodeCount');
    await bad({ graphName: 'gridnav_planner', episodeCount: 100_001 }, 'episodeCount');
    await bad({ graphName: 'gridnav_planner', episodeCount: 1, workerCount: 65 }, 'workerCount');
    await bad({ graphName: 'gridnav_planner', episodeCount: 1, priority: 1.5 }, 'priority');
    await bad({ graphName: 'gridnav_planner', episodeCount: 1, memoryBudgetMb: -1 }, 'memoryBudgetMb');
    await bad({ graphName: 'gridnav_planner', episodeCount: 1, overrides: { nope: { x: 1 } } }, 'nope');
    await bad({ graphName: 'gridnav_planner', episodeCount: 1, overrides: { env: 3 } }, 'overrides.env');
    expect(h.scheduler.queue()).toEqual([]);
    expect(h.scheduler.catalog.listRuns()).toEqual([]);
  });
});
