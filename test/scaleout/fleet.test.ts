/**
 * The Redis path end to end: a real redis-server, the head (a server with --redis) and
 * `evalctl worker` processes with their own working directories. A run spread over the
 * workers ends with the records and aggregates of a one-machine run of the same spec (timing
 * and worker fields aside), also when a worker is SIGKILLed mid-shard; a cancel stops every
 * worker's eval processes within 2 s; a shard whose eval process is stopped (SIGSTOP) is killed
 * by its worker and played again; higher-priority shards are taken first; Redis lost
 * mid-run ends the run ABORTED with its committed episodes kept, and a retry once Redis is back
 * completes it with the one-machine result; a head stopped mid-run and started again with
 * --resume completes it the same way.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { readSummary } from '../../src/store/run-dir.js';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARD_QUEUE } from '../../src/scaleout/shard-flow.js';
import type { RunSummary } from '../../src/store/types.js';
import { startServer, type TestServer } from '../app.helpers.js';
import {
  LOCK_MS,
  STALLED_MS,
  TOKEN,
  startFleetFixture,
  stopFleetFixture,
  markedPids,
  playingPids,
  resultOf,
  startWorker,
  waitFor,
  type TestWorker,
} from './fleet.js';
import { startTestRedis, type TestRedis } from './redis-server.js';

const SPEC = {
  graphName: 'gridnav_planner',
  episodeCount: 96,
  seed: 7,
  shardSize: 8,
  workerCount: 2,
  overrides: { env: { step_latency_ms: 2 } },
};

let redis: TestRedis;
let head: TestServer;
let baseDir: string;
let baseline: { summary: string; episodes: string[] };
const workers: TestWorker[] = [];

const runDirOf = (runId: string) => join(head.dir, 'outputs', 'eval_runs', runId);
const summaryOf = (runId: string): Promise<RunSummary> => readSummary(runDirOf(runId));
const ended = (runId: string) =>
  waitFor(`run ${runId} to end`, async () => (existsSync(join(runDirOf(runId), '_DONE')) ? await summaryOf(runId) : null), 120_000);
/** Past this silence a worker kills a shard's eval process (a healthy one beats every 600 ms, so none is killed for nothing). */
const EVAL_HUNG_MS = 3000;
const addWorker = async (name: string, slots = 2) => {
  const w = await startWorker({ redisUrl: redis.url, serverUrl: head.url, name, slots, args: ['--eval-hung-ms', String(EVAL_HUNG_MS)] });
  workers.push(w);
  return w;
};

beforeAll(async () => {
  ({ redis, head, baseDir, baseline } = await startFleetFixture(SPEC, 'scaleout-base-'));
}, 120_000);

afterAll(() => stopFleetFixture({ redis, head, baseDir }, workers), 60_000);

describe('scale-out over Redis', () => {
  it('refuses to start a head when Redis cannot be reached, with REDIS_UNAVAILABLE', async () => {
    await expect(startServer({ redis: { redisUrl: 'redis://127.0.0.1:1' } })).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });
  });

  it('hands the shards of a higher-priority run out first', async () => {
    const small = { ...SPEC, episodeCount: 4, shardSize: 2, workerCount: 1, overrides: {} };
    const low = await head.app.scheduler.submit({ ...small, priority: 0 });
    const high = await head.app.scheduler.submit({ ...small, priority: 5 });
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue(SHARD_QUEUE, { connection });
    try {
      await waitFor('all four shards on the queue', async () => {
        const c = await queue.getJobCounts('prioritized', 'wait');
        return (c.prioritized ?? 0) + (c.wait ?? 0) === 4;
      });
    } finally {
      await queue.close();
      connection.disconnect();
    }
    const w = await addWorker('solo', 1);
    await Promise.all([ended(low.runId), ended(high.runId)]);
    const order = head.app.scaleout!.claims().map((c) => c.runId);
    expect(order).toEqual([high.runId, high.runId, low.runId, low.runId]);
    // Stopped, it takes its spare eval process along.
    expect(await w.stop()).toEqual([]);
  }, 120_000);

  it('spreads 96 episodes over 3 workers and ends with the one-machine result', async () => {
    await Promise.all(['w1', 'w2', 'w3'].map((n) => addWorker(n)));
    const auth = { authorization: `Bearer ${TOKEN}` };
    const fleet = await waitFor('the three workers in `workers`', async () => {
      const r = await head.gql<{ workers: { name: string; slots: number; lastHeartbeat: string }[] }>(
        '{ workers { name slots lastHeartbeat shards { runId shard } } }',
        {},
        auth,
      );
      const names = (r.data?.workers ?? []).map((w) => w.name);
      return ['w1', 'w2', 'w3'].every((n) => names.includes(n)) ? r.data!.workers : null;
    });
    expect(fleet.find((w) => w.name === 'w1')?.slots).toBe(2);
    const run = await head.app.scheduler.submit(SPEC);
    const shards = await waitFor('run.shards', async () => {
      const r = await head.gql<{ run: { shards: { index: number; first: number; end: number; state: string }[] | null } }>(
        'query ($id: ID!) { run(id: $id) { shards { index first end state worker committed attempts } } }',
        { id: run.runId },
        auth,
      );
      return r.data?.run.shards;
    });
    expect(shards.map((x) => [x.index, x.first, x.end])).toEqual(Array.from({ length: 12 }, (_, i) => [i, i * 8, i * 8 + 8]));
    const s = await ended(run.runId);
    expect(s.status).toBe('COMPLETED');
    expect(await resultOf(runDirOf(run.runId))).toEqual(baseline);
    const takers = new Set(
      head.app
        .scaleout!.claims()
        .filter((c) => c.runId === run.runId)
        .map((c) => c.worker),
    );
    expect(takers.size).toBeGreaterThan(1);
  }, 180_000);

  it('a worker SIGKILLed mid-shard: its shard goes to another worker, the result is unchanged and no episode is recorded twice', async () => {
    const run = await head.app.scheduler.submit(SPEC);
    // When each shard was first seen running and completed (25 ms polls): how long one shard takes in this run.
    const seen = new Map<number, { running?: number; completed?: number; attempts: number }>();
    const track = setInterval(() => {
      for (const sh of head.app.scaleout!.shardsOf(run.runId) ?? []) {
        const t = seen.get(sh.index) ?? { attempts: sh.attempts };
        t.attempts = sh.attempts;
        if (sh.state === 'RUNNING' && t.running === undefined) t.running = Date.now();
        if (sh.state === 'COMPLETED' && t.completed === undefined) t.completed = Date.now();
        seen.set(sh.index, t);
      }
    }, 25);
    const victim = await waitFor('a shard half done', () =>
      head.app
        .scaleout!.shardsOf(run.runId)
        ?.find((s) => s.state === 'RUNNING' && s.committed >= 1 && s.committed <= 6 && s.worker !== null),
    );
    const w = workers.find((x) => x.name === victim.worker)!;
    w.proc.kill('SIGKILL');
    const killedAt = Date.now();
    const retaken = await waitFor('the shard taken again', () => {
      const taken = head.app.scaleout!.claims().filter((c) => c.runId === run.runId && c.shard === victim.index);
      return taken.length >= 2 ? taken[taken.length - 1] : undefined;
    });
    const retakenAt = Date.now();
    expect(retaken.worker).not.toBe(victim.worker);
    const s = await ended(run.runId);
    clearInterval(track);
    // Recovery: the lock runs out and the next stalled check frees the shard (LOCK_MS + STALLED_MS), then it waits
    // at most one shard's time for a free slot (the longest shard of this run that no worker lost, claim to completion).
    const oneShard = Math.max(
      ...[...seen.entries()]
        .filter(([i, t]) => i !== victim.index && t.attempts === 1 && t.running !== undefined && t.completed !== undefined)
        .map(([, t]) => t.completed! - t.running!),
    );
    expect(Number.isFinite(oneShard)).toBe(true);
    // (+ 250 ms: the 25 ms polls here and the claim's HTTP round trip to the head.)
    expect(retakenAt - killedAt).toBeLessThanOrEqual(LOCK_MS + STALLED_MS + oneShard + 250);
    expect(s.status).toBe('COMPLETED');
    expect(new Set(s.episodes.map((e) => e.index)).size).toBe(96);
    expect(await resultOf(runDirOf(run.runId))).toEqual(baseline);
    await w.stop();
    workers.splice(workers.indexOf(w), 1);
    await addWorker('w4');
  }, 180_000);

  it("a shard's eval process stopped with SIGSTOP: its worker kills it after --eval-hung-ms, the shard is played again, the result is unchanged", async () => {
    // A third of the baseline's episodes: each record depends only on its index and the seed.
    const run = await head.app.scheduler.submit({ ...SPEC, episodeCount: 32, overrides: { env: { step_latency_ms: 20 } } });
    const victim = await waitFor('a shard half done', () =>
      head.app
        .scaleout!.shardsOf(run.runId)
        ?.find((s) => s.state === 'RUNNING' && s.committed >= 1 && s.committed <= 6 && s.worker !== null),
    );
    const w = workers.find((x) => x.name === victim.worker)!;
    // The worker's eval processes playing this run (its other slot may play another shard of it: stopped too).
    const stopped = playingPids(w.mark, [w.proc.pid!]).filter((pid) => {
      try {
        return JSON.parse(readFileSync(`/proc/${pid}/cwd/spec.json`, 'utf8')).runId === run.runId;
      } catch {
        return false;
      }
    });
    expect(stopped.length).toBeGreaterThanOrEqual(1);
    for (const pid of stopped) process.kill(pid, 'SIGSTOP');
    try {
      const s = await ended(run.runId);
      expect(s.status).toBe('COMPLETED');
      expect(s.episodes.map((e) => e.index)).toEqual(Array.from({ length: 32 }, (_, i) => i));
      expect((await resultOf(runDirOf(run.runId))).episodes).toEqual(baseline.episodes.slice(0, 32));
      expect(w.output()).toContain('sent no heartbeat');
      await waitFor('the stopped eval processes to be gone', () => stopped.every((pid) => !markedPids(w.mark).includes(pid)), 10_000);
    } finally {
      for (const pid of stopped) if (markedPids(w.mark).includes(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 180_000);

  it('a cancel stops the eval processes on every worker within 2 s and leaves none behind', async () => {
    const run = await head.app.scheduler.submit({ ...SPEC, overrides: { env: { step_latency_ms: 20 } } });
    await waitFor(
      'eval processes on at least two workers',
      () => workers.filter((w) => playingPids(w.mark, [w.proc.pid!]).length > 0).length >= 2,
    );
    await waitFor('an episode committed', async () => (head.app.scaleout!.shardsOf(run.runId) ?? []).some((s) => s.committed > 0));
    const t0 = Date.now();
    await head.app.scheduler.cancel(run.runId);
    // Spares waiting for the next shard stay: they belong to no run.
    await waitFor('no eval process of the run left', () => workers.every((w) => playingPids(w.mark, [w.proc.pid!]).length === 0), 10_000);
    expect(Date.now() - t0).toBeLessThanOrEqual(2000);
    expect((await ended(run.runId)).status).toBe('CANCELLED');
  }, 120_000);

  it('the head stopped mid-run and started again with --resume: the run goes back on the fleet and ends as one machine would', async () => {
    const run = await head.app.scheduler.submit({ ...SPEC, overrides: { env: { step_latency_ms: 20 } } });
    await waitFor('an episode committed', async () => (head.app.scaleout!.shardsOf(run.runId) ?? []).some((s) => s.committed > 0));
    const port = Number(new URL(head.url).port);
    await head.halt();
    const stopped = await summaryOf(run.runId);
    expect(stopped.status).toBe('ABORTED');
    expect(stopped.episodesDone).toBeLessThan(96);
    // Same folder and port (the workers know the head by its URL), same Redis.
    head = await startServer(
      { token: TOKEN, redis: { redisUrl: redis.url, redisLostMs: 1000 }, scheduler: { resumeInterrupted: true } },
      { dir: head.dir, port },
    );
    const resumed = await waitFor(
      'the resumed run to end',
      async () => {
        const now = await summaryOf(run.runId);
        return now.status !== 'ABORTED' && now.finishedAt ? now : null;
      },
      120_000,
    );
    expect(resumed.status, JSON.stringify(resumed.error)).toBe('COMPLETED');
    expect(resumed.episodes.map((e) => e.index)).toEqual(Array.from({ length: 96 }, (_, i) => i));
    expect((await resultOf(runDirOf(run.runId))).episodes).toEqual(baseline.episodes);
  }, 240_000);

  it('Redis lost mid-run: the run ends ABORTED with its committed episodes kept, a new run is refused with REDIS_UNAVAILABLE, and once Redis is back a retry completes it as one machine would', async () => {
    const run = await head.app.scheduler.submit({ ...SPEC, overrides: { env: { step_latency_ms: 20 } } });
    await waitFor('an episode committed', async () => (head.app.scaleout!.shardsOf(run.runId) ?? []).some((s) => s.committed > 0));
    await redis.stop();
    const s = await ended(run.runId);
    expect(s.status).toBe('ABORTED');
    expect(s.error?.code).toBe('REDIS_LOST');
    expect(s.episodesDone).toBeGreaterThan(0);
    const dirs = await readdir(join(runDirOf(run.runId), 'episodes'));
    expect(dirs.filter((d) => existsSync(join(runDirOf(run.runId), 'episodes', d, 'episode.json'))).length).toBeGreaterThanOrEqual(
      s.episodesDone,
    );
    await expect(head.app.scheduler.submit(SPEC)).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });

    // Redis back where it was: retry runs only the episodes never committed, on the fleet, and the run ends as one machine's.
    redis = await startTestRedis(redis.port);
    // Refused (nothing moved) until the head has reconnected, as a submit is.
    await waitFor(
      'the head to take the retry',
      () =>
        head.app.scheduler.retry(run.runId).then(
          () => true,
          (err: { code?: string }) => {
            if (err.code !== 'REDIS_UNAVAILABLE') throw err;
            return false;
          },
        ),
      30_000,
    );
    const retried = await waitFor(
      'the retried run to end',
      async () => {
        const now = await summaryOf(run.runId);
        return now.finishedAt && now.status !== 'ABORTED' ? now : null;
      },
      120_000,
    );
    expect(retried.status, JSON.stringify(retried.error)).toBe('COMPLETED');
    expect(retried.episodes.map((e) => e.index)).toEqual(Array.from({ length: 96 }, (_, i) => i));
    expect((await resultOf(runDirOf(run.runId))).episodes).toEqual(baseline.episodes);
  }, 240_000);
});
