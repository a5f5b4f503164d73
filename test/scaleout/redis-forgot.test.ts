/**
 * A Redis that forgot (started without persistence, SIGKILLed mid-run and started again on the
 * same port, so it comes back empty, well within --redis-lost-ms): the head notices that the
 * run's jobs are gone and puts the shards not yet committed on the queue again, and the run
 * ends with a one-machine run's records, every episode once. Where Redis comes back but refuses
 * them, the run ends ABORTED (REDIS_LOST) with its committed episodes, and a retry completes
 * it. A worker's work-dir keeps no folder of a shard it has committed or handed back.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { readSummary } from '../../src/store/run-dir.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../src/store/types.js';
import { startServer, type TestServer } from '../app.helpers.js';
import { TOKEN, oneMachineResult, playingPids, resultOf, startWorker, waitFor, type TestWorker } from './fleet.js';
import { startTestRedis, type TestRedis } from './redis-server.js';

const SPEC = {
  graphName: 'gridnav_planner',
  episodeCount: 24,
  seed: 5,
  shardSize: 4,
  workerCount: 2,
  overrides: { env: { step_latency_ms: 10 } },
};
const ALL = Array.from({ length: SPEC.episodeCount }, (_, i) => i);

let redis: TestRedis;
let head: TestServer;
let baseDir: string;
let baseline: { summary: string; episodes: string[] };
const workers: TestWorker[] = [];

const runDirOf = (runId: string) => join(head.dir, 'outputs', 'eval_runs', runId);
const summaryOf = (runId: string): Promise<RunSummary> => readSummary(runDirOf(runId));
/** The run's summary once it has ended with a status other than `not`. */
const endedOtherThan = (runId: string, not: string | null = null) =>
  waitFor(
    `run ${runId} to end`,
    async () => {
      if (!existsSync(join(runDirOf(runId), '_DONE'))) return null;
      const s = await summaryOf(runId);
      return s.finishedAt && s.status !== not ? s : null;
    },
    90_000,
  );
/** Folders in a worker's work-dir that hold a shard (a spec, or episodes): a waiting spare's holds neither. */
const shardFolders = async (w: TestWorker): Promise<string[]> =>
  (await readdir(w.workDir).catch(() => [])).filter((d) => ['spec.json', 'episodes'].some((f) => existsSync(join(w.workDir, d, f))));
/** Kills Redis mid-run (SIGKILL, no persistence) once an episode is committed and a shard still waits, and starts it again empty. */
async function forget(runId: string, args: string[] = []): Promise<void> {
  await waitFor('an episode committed and a shard waiting', () => {
    const shards = head.app.scaleout!.shardsOf(runId) ?? [];
    return shards.some((s) => s.committed > 0) && shards.some((s) => s.state === 'WAITING');
  });
  await redis.kill();
  redis = await startTestRedis(redis.port, args);
}

beforeAll(async () => {
  redis = await startTestRedis();
  // Far longer than the restart: this is a Redis that forgot, not one that was away.
  head = await startServer({ token: TOKEN, redis: { redisUrl: redis.url, redisLostMs: 60_000 } });
  baseDir = await mkdtemp(join(tmpdir(), 'redis-forgot-base-'));
  baseline = await oneMachineResult(baseDir, {
    graphName: SPEC.graphName,
    episodes: SPEC.episodeCount,
    seed: SPEC.seed,
    shardSize: SPEC.shardSize,
    workers: SPEC.workerCount,
    latencyMs: SPEC.overrides.env.step_latency_ms,
  });
  workers.push(await startWorker({ redisUrl: redis.url, serverUrl: head.url, name: 'f1' }));
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(workers.map((w) => w.stop()));
  await head?.stop({ cancelRunning: true });
  await redis?.stop();
  if (baseDir) await rm(baseDir, { recursive: true, force: true });
}, 60_000);

describe('a Redis that forgot the fleet', () => {
  it('restarted empty mid-run: the shards not committed go on the queue again and the run ends as on one machine, every episode once', async () => {
    const run = await head.app.scheduler.submit(SPEC);
    await forget(run.runId);
    const s = await endedOtherThan(run.runId);
    expect(s.status, JSON.stringify(s.error)).toBe('COMPLETED');
    expect(s.episodes.map((e) => e.index)).toEqual(ALL);
    expect(await readdir(join(runDirOf(run.runId), 'episodes'))).toHaveLength(SPEC.episodeCount);
    expect(await resultOf(runDirOf(run.runId))).toEqual(baseline);
    // Each shard's folder went once its shard was committed (or, played twice, handed back).
    await waitFor('no shard folder left on the worker', async () => (await shardFolders(workers[0]!)).length === 0, 10_000);
  }, 150_000);

  it('restarted empty and refusing the shards: the run ends ABORTED (REDIS_LOST) with its episodes, and a retry completes it as on one machine', async () => {
    const run = await head.app.scheduler.submit(SPEC);
    // Over its memory limit from the start (noeviction): it answers reads and refuses every write.
    await forget(run.runId, ['--maxmemory', '1', '--maxmemory-policy', 'noeviction']);
    const lost = await endedOtherThan(run.runId);
    expect(lost.status).toBe('ABORTED');
    expect(lost.error?.code).toBe('REDIS_LOST');
    expect(lost.error?.message).toMatch(/refused them again \(OOM /);
    expect(lost.episodesDone).toBeGreaterThan(0);
    expect(lost.episodesDone).toBeLessThan(SPEC.episodeCount);
    // The run's eval processes stop once the head refuses their commits; their folders go with them.
    await waitFor('no eval process of the run left', () => playingPids(workers[0]!.mark, [workers[0]!.proc.pid!]).length === 0, 10_000);
    await waitFor('no shard folder left on the worker', async () => (await shardFolders(workers[0]!)).length === 0, 10_000);

    const admin = new Redis(redis.url);
    try {
      await admin.config('SET', 'maxmemory', '0');
    } finally {
      admin.disconnect();
    }
    await head.app.scheduler.retry(run.runId);
    const retried = await endedOtherThan(run.runId, 'ABORTED');
    expect(retried.status, JSON.stringify(retried.error)).toBe('COMPLETED');
    expect(retried.episodes.map((e) => e.index)).toEqual(ALL);
    expect((await resultOf(runDirOf(run.runId))).episodes).toEqual(baseline.episodes);
  }, 150_000);

  it("a cancelled run's shards leave no folder in the worker's work-dir", async () => {
    const run = await head.app.scheduler.submit({ ...SPEC, overrides: { env: { step_latency_ms: 30 } } });
    await waitFor('an episode committed', () => (head.app.scaleout!.shardsOf(run.runId) ?? []).some((s) => s.committed > 0));
    expect((await shardFolders(workers[0]!)).length).toBeGreaterThan(0);
    await head.app.scheduler.cancel(run.runId);
    expect((await endedOtherThan(run.runId)).status).toBe('CANCELLED');
    await waitFor('no eval process of the run left', () => playingPids(workers[0]!.mark, [workers[0]!.proc.pid!]).length === 0, 10_000);
    await waitFor('no shard folder left on the worker', async () => (await shardFolders(workers[0]!)).length === 0, 10_000);
  }, 90_000);
});
