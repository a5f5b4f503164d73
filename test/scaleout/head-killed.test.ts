/**
 * The head as a user runs it (`evalctl serve --redis`, its own process) SIGKILLed while a run
 * is on the fleet: nothing on the head gets to say the run stopped. Started again on the same
 * port with --resume, it takes the run back and ends it with the records and aggregates of a
 * one-machine run, every episode once.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { readSummary } from '../../src/store/run-dir.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../src/store/types.js';
import { MAIN, TOKEN, oneMachineResult, resultOf, startWorker, waitFor, type TestWorker } from './fleet.js';
import { startTestRedis, type TestRedis } from './redis-server.js';

const EPISODES = 48;
const SEED = 11;

let redis: TestRedis;
let dir: string;
let head: ResultPromise | undefined;
const workers: TestWorker[] = [];

/** `evalctl serve --redis` on `port` (0: any); resolves with its URL once it listens. */
async function startHead(port: number, resume: boolean): Promise<{ proc: ResultPromise; url: string; log: () => string }> {
  const args = [MAIN, 'serve', '--port', String(port), '--outputs', join(dir, 'head'), '--redis', redis.url];
  if (resume) args.push('--resume');
  const proc = execa(process.execPath, args, {
    reject: false,
    stdin: 'ignore',
    all: true,
    forceKillAfterDelay: 3000,
    cleanup: true,
    env: { EVAL_API_TOKEN: TOKEN },
  });
  let out = '';
  proc.all?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const url = await new Promise<string>((ok, fail) => {
    proc.stdout?.on('data', () => {
      const m = /evalctl serve: (http:\/\/\S+)/.exec(out);
      if (m) ok(m[1]!);
    });
    void proc.then(() => fail(new Error(`the head exited: ${out}`)));
  });
  return { proc, url, log: () => out };
}

async function gql<T>(url: string, query: string): Promise<T> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown };
  if (!body.data) throw new Error(`GraphQL: ${JSON.stringify(body.errors)}`);
  return body.data;
}

beforeAll(async () => {
  redis = await startTestRedis();
  dir = await mkdtemp(join(tmpdir(), 'head-killed-'));
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(workers.map((w) => w.stop()));
  if (head) {
    head.kill('SIGTERM');
    await head;
  }
  await redis?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

describe('a scale-out head SIGKILLed mid-run', () => {
  it('started again with --resume, it ends the run as one machine would, every episode once', async () => {
    const first = await startHead(0, false);
    head = first.proc;
    for (const name of ['k1', 'k2']) workers.push(await startWorker({ redisUrl: redis.url, serverUrl: first.url, name }));
    const { startEval } = await gql<{ startEval: { runId: string } }>(
      first.url,
      `mutation { startEval(input: { graphName: "gridnav_planner", episodeCount: ${EPISODES}, workerCount: 8, seed: ${SEED}, shardSize: 8, overrides: { env: { step_latency_ms: 20 } } }) { runId } }`,
    );
    const runDir = join(dir, 'head', 'eval_runs', startEval.runId);
    const summary = (): Promise<RunSummary> => readSummary(runDir);
    await waitFor(
      'an episode committed on the head',
      async () => existsSync(join(runDir, 'summary.json')) && (await summary()).episodesDone > 0,
    );

    first.proc.kill('SIGKILL');
    await first.proc;
    const killed = await summary();
    // Killed, it could not write an ending: the run still reads RUNNING, part done.
    expect(killed.status).toBe('RUNNING');
    expect(killed.episodesDone).toBeLessThan(EPISODES);

    const port = Number(new URL(first.url).port);
    const second = await startHead(port, true);
    head = second.proc;
    // Recovery first marks it ABORTED (the backend stopped); --resume then puts it back on the fleet.
    const done = await waitFor(
      'the resumed run to end',
      async () => {
        const now = await summary();
        return now.status !== 'ABORTED' && now.finishedAt ? now : null;
      },
      180_000,
    );
    expect(done.status, `${JSON.stringify(done.error)}\n${second.log()}`).toBe('COMPLETED');
    expect(done.episodes.map((e) => e.index)).toEqual(Array.from({ length: EPISODES }, (_, i) => i));

    // The same spec on one machine.
    const expected = await oneMachineResult(join(dir, 'local'), {
      graphName: 'gridnav_planner',
      episodes: EPISODES,
      seed: SEED,
      shardSize: 8,
      workers: 8,
      latencyMs: 20,
    });
    const got = await resultOf(runDir);
    expect(got.episodes).toEqual(expected.episodes);
    expect(got.summary).toEqual(expected.summary);
  }, 300_000);
});
