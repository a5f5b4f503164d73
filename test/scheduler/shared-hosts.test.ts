/**
 * The backend's shared model hosts: refcounted by queued and running runs, kept through an
 * idle grace, unloaded after it, restarted when one dies.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isPidAlive } from '../../src/scheduler/admission/resource-sampler.js';
import { hostSecretFor } from '../../src/host/host-secret.js';
import { readSummary } from '../../src/store/run-dir.js';
import { FixedSampler } from '../fixtures/fixed-sampler.js';
import { closeAll, makeScheduler, slow, waitFor, waitForStatus } from './harness.js';

afterEach(closeAll);

const planner = (h: Awaited<ReturnType<typeof makeScheduler>>) => h.scheduler.sharedHosts().find((x) => x.nodeset === 'planner');

/** Waits until the run's shared_urls.json points the planner at `url` (a restarted host). */
const namesHost = (h: Awaited<ReturnType<typeof makeScheduler>>, runId: string, url: string) =>
  waitFor(
    'shared_urls.json to name the new host',
    () => {
      const urls = JSON.parse(readFileSync(join(h.scheduler.getRunDir(runId), 'shared_urls.json'), 'utf8')) as Record<string, string>;
      return urls.planner === url;
    },
    5000,
  );

describe('shared hosts', () => {
  it('refcounts a shared host by queued runs, keeps it through the idle grace, then unloads it', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler(), sharedHostIdleMs: 1500 });
    h.scheduler.acquireInteractiveLock('test');
    const a = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 });
    const b = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 });
    const host = planner(h)!;
    expect(host.holders.sort()).toEqual([a.runId, b.runId].sort());
    expect(host.pid).not.toBeNull();
    const urls = JSON.parse(readFileSync(join(h.scheduler.getRunDir(a.runId), 'shared_urls.json'), 'utf8')) as Record<string, string>;
    expect(urls).toEqual({ planner: host.url });

    await h.scheduler.cancel(a.runId);
    expect(planner(h)!.holders).toEqual([b.runId]);
    await h.scheduler.cancel(b.runId);
    expect(planner(h)).toMatchObject({ holders: [], idleSince: expect.any(String), pid: host.pid });

    // A run submitted within the grace borrows the same process: no reload.
    const c = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 });
    expect(planner(h)).toMatchObject({ pid: host.pid, holders: [c.runId], idleSince: null });
    await h.scheduler.cancel(c.runId);
    await h.scheduler.tick();
    expect(isPidAlive(host.pid!)).toBe(true);

    await waitFor('the idle host to be unloaded', () => planner(h) === undefined, 10_000);
    await waitFor('the host process to exit', () => !isPidAlive(host.pid!), 5000);
  });

  it('restarts a shared host that dies while runs hold it, and queued runs get its new URL', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler() });
    const release = h.scheduler.acquireInteractiveLock('test');
    const a = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 2 });
    const first = planner(h)!;
    process.kill(first.pid!, 'SIGKILL');
    const second = await waitFor('the host to come back', () => {
      const p = planner(h);
      return p && p.pid !== null && p.pid !== first.pid ? p : undefined;
    });
    expect(second).toMatchObject({ restarts: 1, holders: [a.runId] });
    expect(second.url).not.toBe(first.url);
    await namesHost(h, a.runId, second.url!);

    release();
    const done = await waitForStatus(h, a.runId, 'COMPLETED');
    expect(done.statusCounts).toEqual({ COMPLETED: 2 });
  });

  it('kills and restarts a shared host that stops answering while runs hold it, and queued runs get its new URL', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler(), sharedHostHungMs: 1500 });
    const release = h.scheduler.acquireInteractiveLock('test');
    const a = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 2 });
    const first = planner(h)!;
    // Stopped, the process is alive but answers nothing: a hung model server.
    process.kill(first.pid!, 'SIGSTOP');
    try {
      const second = await waitFor('the hung host to be replaced', () => {
        const p = planner(h);
        return p && p.pid !== null && p.pid !== first.pid ? p : undefined;
      });
      expect(second).toMatchObject({ restarts: 1, holders: [a.runId] });
      await waitFor('the hung process to be gone', () => !isPidAlive(first.pid!), 10_000);
      expect(h.logger.lines.join('\n')).toMatch(
        /shared host planner \(pid \d+\) answered no \/health for \d+ s with 1 run\(s\) using it; killing it to restart it/,
      );
      await namesHost(h, a.runId, second.url!);
    } finally {
      if (isPidAlive(first.pid!)) process.kill(first.pid!, 'SIGKILL');
    }
    release();
    const done = await waitForStatus(h, a.runId, 'COMPLETED');
    expect(done.statusCounts).toEqual({ COMPLETED: 2 });
  });

  it('a running run whose shared host dies crashes only the episode in flight, not a hang, and carries on with the restarted host', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler() });
    const run = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 4, overrides: slow(20) });
    const dir = h.scheduler.getRunDir(run.runId);
    let seen = await readSummary(dir);
    const deadline = Date.now() + 40_000;
    while (seen.status === 'QUEUED' || (seen.status === 'RUNNING' && seen.episodesDone < 1)) {
      if (Date.now() > deadline) throw new Error(`the run did not finish an episode in time: ${JSON.stringify(seen.error)}`);
      await new Promise((r) => setTimeout(r, 50));
      seen = await readSummary(dir).catch(() => seen);
    }
    expect(seen).toMatchObject({ status: 'RUNNING' });
    process.kill(planner(h)!.pid!, 'SIGKILL');
    const final = await waitForStatus(h, run.runId, ['COMPLETED', 'FAILED'], 45_000);
    expect(final.episodesDone).toBe(4);
    expect(final.statusCounts.CRASHED ?? 0).toBeGreaterThanOrEqual(1);
    // The worker waits for the restarted host (its new URL comes over the IPC channel) before its next episode, so only
    // the episode in flight crashed and every later one completes on the restarted host.
    const crashed = final.episodes.find((e) => e.status === 'CRASHED')!.index;
    const later = final.episodes.filter((e) => e.index > crashed).map((e) => e.status);
    expect(later).toEqual(later.map(() => 'COMPLETED'));
    expect((await readSummary(dir)).status).toBe(final.status);
  });

  it('two runs sharing the planner host, run together, take no longer than run one after the other', async () => {
    // Env steps sleep (step_latency_ms), so the runs' time is waiting, not CPU: on a loaded
    // machine both orders pay the same CPU, and the batcher's waits are what the ratio shows.
    const h = await makeScheduler({ sampler: new FixedSampler(), tickIntervalMs: 50 });
    const input = (epsilon: number) => ({
      graphName: 'gridnav_planner',
      episodeCount: 8,
      workerCount: 2,
      stepBudget: 40,
      seed: 7,
      overrides: { env: { step_latency_ms: 15 }, agent: { epsilon } },
    });
    /** Submits the inputs while the lock holds them back, releases them together, and times them to their end. */
    const timed = async (inputs: Array<ReturnType<typeof input>>) => {
      const release = h.scheduler.acquireInteractiveLock('test');
      const ids: string[] = [];
      for (const i of inputs) ids.push((await h.scheduler.submit(i)).runId);
      const t0 = performance.now();
      release();
      await h.scheduler.tick();
      const done = await Promise.all(ids.map((id) => waitForStatus(h, id, ['COMPLETED', 'FAILED', 'ABORTED'], 120_000)));
      return { ms: performance.now() - t0, done };
    };
    const a = await timed([input(0.5)]);
    const b = await timed([input(0.9)]);
    const both = await timed([input(0.5), input(0.9)]);
    for (const r of [a, b, both]) for (const s of r.done) expect(s.status).toBe('COMPLETED');
    // Who shared a batch never changes a result.
    expect(both.done.map((s) => s.aggregateMetrics)).toEqual([a.done[0]!.aggregateMetrics, b.done[0]!.aggregateMetrics]);
    const ratio = both.ms / (a.ms + b.ms);
    expect(
      ratio,
      `together ${Math.round(both.ms)} ms, one after the other ${Math.round(a.ms)} + ${Math.round(b.ms)} ms`,
    ).toBeLessThanOrEqual(1.3);
  }, 240_000);

  it('a shared host answers only its callers: the eval process presents its secret, which reaches no file, log or API answer', async () => {
    const h = await makeScheduler({ sampler: new FixedSampler() });
    const run = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 2, workerCount: 2 });
    const host = planner(h)!;
    const secret = hostSecretFor(host.url!)!;
    expect(secret).toBeTruthy();
    expect((await fetch(`${host.url!}/manifest`)).status).toBe(401);
    const done = await waitForStatus(h, run.runId, ['COMPLETED', 'FAILED', 'ABORTED']);
    expect(done.status).toBe('COMPLETED');
    expect(done.statusCounts).toEqual({ COMPLETED: 2 });
    const files: string[] = [];
    const walk = (d: string): void => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(h.dir);
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) expect(readFileSync(f).includes(secret), f).toBe(false);
    expect(h.logger.lines.join('\n')).not.toContain(secret);
    expect(JSON.stringify(h.scheduler.sharedHosts())).not.toContain(secret);
  });
});
