/**
 * A worker whose calls to the head fail, end to end (a real redis-server, the head, `evalctl
 * worker` processes): a worker the head would refuse does not start (exit 2 for the token, 1
 * for a head it cannot reach); a head cut off from a worker for a while (a TCP proxy between
 * them that drops every connection) costs retries, the shard goes back on the queue (and reads
 * WAITING in Run.shards, not RUNNING) and the run still ends COMPLETED with a one-machine run's records; a shard that fails for good on the queue
 * ends its run FAILED (SHARD_FAILED) instead of RUNNING for ever, and a retry completes it.
 */
import { existsSync } from 'node:fs';
import { readSummary } from '../../src/store/run-dir.js';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { UnrecoverableError, Worker } from 'bullmq';
import { execa } from 'execa';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARD_QUEUE } from '../../src/scaleout/shard-flow.js';
import type { RunSummary } from '../../src/store/types.js';
import type { TestServer } from '../app.helpers.js';
import { MAIN, TOKEN, startFleetFixture, stopFleetFixture, resultOf, startWorker, waitFor, type TestWorker } from './fleet.js';
import type { TestRedis } from './redis-server.js';

const SPEC = {
  graphName: 'gridnav_planner',
  episodeCount: 24,
  seed: 11,
  shardSize: 4,
  workerCount: 2,
  overrides: { env: { step_latency_ms: 5 } },
};

/** A TCP proxy to `port` that can drop every connection and refuse new ones until restored. */
async function startProxy(port: number): Promise<{ url: string; cut(): void; restore(): void; stop(): Promise<void> }> {
  let open = true;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (!open) return void client.destroy();
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: own } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${own}`,
    cut: () => {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore: () => {
      open = true;
    },
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let redis: TestRedis;
let head: TestServer;
let baseDir: string;
let baseline: { summary: string; episodes: string[] };
const workers: TestWorker[] = [];

const runDirOf = (runId: string) => join(head.dir, 'outputs', 'eval_runs', runId);
const summaryOf = (runId: string): Promise<RunSummary> => readSummary(runDirOf(runId));
const ended = (runId: string) =>
  waitFor(
    `run ${runId} to end`,
    async () => {
      if (!existsSync(join(runDirOf(runId), '_DONE'))) return null;
      const s = await summaryOf(runId);
      return s.finishedAt ? s : null;
    },
    60_000,
  );

/** `evalctl worker` that is expected not to start: its exit code and output. */
const refusedWorker = (serverUrl: string, token: string) =>
  execa(process.execPath, [MAIN, 'worker', '--redis', redis.url, '--server', serverUrl, '--token', token, '--work-dir', baseDir], {
    reject: false,
    stdin: 'ignore',
    timeout: 30_000,
    all: true,
  });

beforeAll(async () => {
  ({ redis, head, baseDir, baseline } = await startFleetFixture(SPEC, 'head-faults-base-'));
}, 120_000);

afterAll(() => stopFleetFixture({ redis, head, baseDir }, workers), 60_000);

describe('a worker whose calls to the head fail', () => {
  it('does not start when the head refuses its token (exit 2) or cannot be reached (exit 1)', async () => {
    const wrong = await refusedWorker(head.url, 'not-the-token');
    expect(wrong.exitCode, wrong.all).toBe(2);
    expect(wrong.stdout).not.toContain('ready');
    expect(wrong.stderr).toMatch(/refused this worker's token.*--token or EVAL_API_TOKEN/);
    const away = await refusedWorker('http://127.0.0.1:1', TOKEN);
    expect(away.exitCode, away.all).toBe(1);
    expect(away.stdout).not.toContain('ready');
    expect(away.stderr).toMatch(/cannot be reached/);
  }, 60_000);

  it('cut off from the head mid-run: it retries, hands its shard back, and the run ends COMPLETED as on one machine', async () => {
    const proxy = await startProxy(Number(new URL(head.url).port));
    try {
      const w = await startWorker({ redisUrl: redis.url, serverUrl: proxy.url, name: 'cut', args: ['--head-retry-ms', '500'] });
      workers.push(w);
      const run = await head.app.scheduler.submit(SPEC);
      await waitFor('an episode committed', () => (head.app.scaleout!.shardsOf(run.runId) ?? []).some((s) => s.committed > 0));
      proxy.cut();
      await waitFor('the worker to hand a shard back', () => w.output().includes('the shard goes back on the queue'));
      expect((await summaryOf(run.runId)).status).toBe('RUNNING');
      proxy.restore();
      const s = await ended(run.runId);
      expect(s.status, JSON.stringify(s.error)).toBe('COMPLETED');
      expect(await resultOf(runDirOf(run.runId))).toEqual(baseline);
      // Each failure was said, and the worker stopped taking shards until the head answered again.
      expect(w.output()).toMatch(/asking again in \d+ ms/);
      expect(w.output()).toContain('takes no new shard until the head');
      expect(w.output()).toContain('taking shards again');
      await w.stop();
    } finally {
      await proxy.stop();
    }
  }, 120_000);

  it('cut off from the head after claiming: Run.shards reads the shard it handed back WAITING, not RUNNING', async () => {
    const proxy = await startProxy(Number(new URL(head.url).port));
    try {
      const w = await startWorker({
        redisUrl: redis.url,
        serverUrl: proxy.url,
        name: 'cut-once',
        slots: 1,
        args: ['--head-retry-ms', '500'],
      });
      workers.push(w);
      const run = await head.app.scheduler.submit(SPEC);
      type Shards = { run: { shards: { index: number; state: string; worker: string | null; attempts: number }[] | null } };
      const shards = async () => {
        const r = await head.gql<Shards>(
          'query ($id: ID!) { run(id: $id) { shards { index state worker attempts } } }',
          { id: run.runId },
          { authorization: `Bearer ${TOKEN}` },
        );
        return r.data?.run.shards ?? [];
      };
      const taken = await waitFor('a shard RUNNING on the worker', async () => (await shards()).find((s) => s.state === 'RUNNING'));
      expect(taken.worker).toBe('cut-once');
      proxy.cut();
      await waitFor('the worker to hand its shard back', () => w.output().includes('the shard goes back on the queue'));
      // The worker cannot tell the head; the queue does. It takes nothing more while cut off, so no shard is on a worker.
      const back = await waitFor('the shard to read WAITING again', async () => {
        const now = await shards();
        const shard = now.find((s) => s.index === taken.index);
        return shard?.state === 'WAITING' && !now.some((s) => s.state === 'RUNNING') ? shard : null;
      });
      expect(back).toMatchObject({ worker: 'cut-once', attempts: 1 });
      expect((await summaryOf(run.runId)).status).toBe('RUNNING');
      proxy.restore();
      const s = await ended(run.runId);
      expect(s.status, JSON.stringify(s.error)).toBe('COMPLETED');
      expect(await resultOf(runDirOf(run.runId))).toEqual(baseline);
      await w.stop();
    } finally {
      await proxy.stop();
    }
  }, 120_000);

  it('a shard that fails for good ends the run FAILED naming it, its episodes kept; a retry completes it as on one machine', async () => {
    const good = await startWorker({ redisUrl: redis.url, serverUrl: head.url, name: 'good', slots: 1 });
    workers.push(good);
    const run = await head.app.scheduler.submit(SPEC);
    await waitFor('an episode committed', () => (head.app.scaleout!.shardsOf(run.runId) ?? []).some((s) => s.committed > 0));
    // A worker of the test's own that fails the first shard it takes for good.
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    let failed: string | undefined;
    const bad = new Worker(
      SHARD_QUEUE,
      async (job) => {
        // A job an earlier test's run left on the queue may come first: only this run's shard is the one its end names.
        if (job.data.runId === run.runId) failed ??= job.id;
        throw new UnrecoverableError('refused by the test');
      },
      { connection, concurrency: 1 },
    );
    let s: RunSummary;
    try {
      s = await ended(run.runId);
    } finally {
      await bad.close();
      connection.disconnect();
    }
    expect(s.status).toBe('FAILED');
    expect(s.error?.code).toBe('SHARD_FAILED');
    const shard = Number(failed!.split('-shard-')[1]);
    expect(s.error?.message).toContain(`shard ${shard} (episodes ${shard * 4}..${shard * 4 + 3}) failed for good`);
    expect(s.error?.message).toContain('refused by the test');
    expect(s.episodesDone).toBeGreaterThan(0);
    expect(s.episodes.map((e) => e.index)).not.toContain(shard * 4);

    await head.app.scheduler.retry(run.runId);
    const retried = await waitFor(
      'the retried run to end',
      async () => {
        const now = await summaryOf(run.runId);
        return now.finishedAt && now.status !== 'FAILED' ? now : null;
      },
      60_000,
    );
    expect(retried.status, JSON.stringify(retried.error)).toBe('COMPLETED');
    expect((await resultOf(runDirOf(run.runId))).episodes).toEqual(baseline.episodes);
  }, 120_000);
});
