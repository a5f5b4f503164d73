/**
 * A scale-out fleet for tests: the head (a real server with --redis, in this process) and
 * `evalctl worker` processes, each with its own working directory and a mark in its
 * environment that its eval processes and hosts inherit, so a test can find every process a
 * worker left behind.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { readSummary } from '../../src/store/run-dir.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { startServer, type TestServer } from '../app.helpers.js';
import { startTestRedis, type TestRedis } from './redis-server.js';

export const MAIN = resolve('dist/main.js');
export const TOKEN = 'scaleout-test-token';

export interface TestWorker {
  name: string;
  mark: string;
  proc: ResultPromise;
  /** Its --work-dir. */
  workDir: string;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
  /** SIGTERM; once the worker has exited, SIGKILLs its marked processes still alive and returns their pids. Idempotent. */
  stop(): Promise<number[]>;
}

/** The test workers' BullMQ lock and stalled-check interval: a dead worker's shard is free again after at most their sum. */
export const LOCK_MS = 1500;
export const STALLED_MS = 500;

export async function startWorker(opts: {
  redisUrl: string;
  serverUrl: string;
  name: string;
  slots?: number;
  lockMs?: number;
  stalledMs?: number;
  /** More flags for `evalctl worker`. */
  args?: string[];
}): Promise<TestWorker> {
  const dir = await mkdtemp(join(tmpdir(), `worker-${opts.name}-`));
  const mark = `${opts.name}-${process.pid}-${Date.now()}`;
  const proc = execa(
    process.execPath,
    [
      MAIN,
      'worker',
      '--redis',
      opts.redisUrl,
      '--server',
      opts.serverUrl,
      '--token',
      TOKEN,
      '--slots',
      String(opts.slots ?? 2),
      '--work-dir',
      dir,
      '--name',
      opts.name,
      '--cores',
      '64',
      '--lock-ms',
      String(opts.lockMs ?? LOCK_MS),
      '--stalled-ms',
      String(opts.stalledMs ?? STALLED_MS),
      ...(opts.args ?? []),
    ],
    { reject: false, stdin: 'ignore', forceKillAfterDelay: 3000, cleanup: true, env: { SCALEOUT_TEST_MARK: mark }, all: true },
  );
  let all = '';
  proc.all?.on('data', (d: Buffer) => {
    all += d.toString();
  });
  await new Promise<void>((ok, fail) => {
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready')) ok();
    });
    void proc.then((r) => fail(new Error(`worker ${opts.name} exited: ${r.all ?? ''}`)));
  });
  let stopped: Promise<number[]> | undefined;
  return {
    name: opts.name,
    mark,
    proc,
    workDir: dir,
    output: () => all,
    stop: () => {
      stopped ??= (async () => {
        proc.kill('SIGTERM');
        await proc;
        // What a dead worker's eval processes left is not this test's to keep.
        const left = markedPids(mark);
        for (const pid of left) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone
          }
        }
        await rm(dir, { recursive: true, force: true });
        return left;
      })();
      return stopped;
    },
  };
}

/** Live processes (other than the worker itself) whose environment carries the mark: a worker's eval processes and hosts. */
export function markedPids(mark: string, except: number[] = []): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (except.includes(pid)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(`SCALEOUT_TEST_MARK=${mark}\0`)) {
        const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
        if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z') out.push(pid);
      }
    } catch {
      // gone, or not ours
    }
  }
  return out;
}

/**
 * The marked processes that belong to a shard: eval processes given a shard (their run dir, the
 * cwd, has a spec.json) and their hosts. A spare (started with --await-go, no spec yet) waits for
 * the next shard and belongs to none.
 */
export function playingPids(mark: string, except: number[] = []): number[] {
  return markedPids(mark, except).filter((pid) => {
    try {
      const spare = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').includes('--await-go');
      return !spare || existsSync(join(readlinkSync(`/proc/${pid}/cwd`), 'spec.json'));
    } catch {
      return false;
    }
  });
}

/** Polls `check` until it is truthy (a state, not a delay); fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 60_000): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const TIMING = new Set(['workerId', 'durationMs', 'startedAt', 'finishedAt']);

/** A record without its timing/worker fields. */
export const withoutTiming = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([k]) => !TIMING.has(k)));

/** A run's result as bytes to compare: the summary with its records, less its run/timing fields, and each episode.json less timing. */
export async function resultOf(runDir: string): Promise<{ summary: string; episodes: string[] }> {
  const s = { ...(await readSummary(runDir)) } as Record<string, unknown>;
  for (const k of ['seq', 'runId', 'createdAt', 'startedAt', 'finishedAt', 'pid', 'priority']) delete s[k];
  s.episodes = (s.episodes as Record<string, unknown>[]).map(withoutTiming);
  const names = (await readdir(join(runDir, 'episodes'))).sort();
  const episodes = await Promise.all(
    names.map(async (n) => JSON.stringify(withoutTiming(JSON.parse(await readFile(join(runDir, 'episodes', n, 'episode.json'), 'utf8'))))),
  );
  return { summary: JSON.stringify(s), episodes };
}

/** The same spec as `evalctl run` on this machine, into `outputs`: the result a fleet's run must equal. */
export async function oneMachineResult(
  outputs: string,
  spec: { graphName: string; episodes: number; seed: number; shardSize: number; workers: number; latencyMs: number },
): Promise<{ summary: string; episodes: string[] }> {
  const r = await execa(
    process.execPath,
    [
      MAIN,
      'run',
      spec.graphName,
      '--episodes',
      String(spec.episodes),
      '--seed',
      String(spec.seed),
      '--shard-size',
      String(spec.shardSize),
      '--workers',
      String(spec.workers),
      '--set',
      `env.step_latency_ms=${spec.latencyMs}`,
      '--outputs',
      outputs,
      '--json',
    ],
    { reject: false },
  );
  if (r.exitCode !== 0) throw new Error(`evalctl run exited ${r.exitCode}: ${r.stderr}`);
  const [id] = await readdir(join(outputs, 'eval_runs'));
  return resultOf(join(outputs, 'eval_runs', id!));
}

/** A run spec a fleet test plays on the workers and on one machine. */
export interface FleetSpec {
  graphName: string;
  episodeCount: number;
  seed: number;
  shardSize: number;
  workerCount: number;
  overrides: { env: { step_latency_ms: number } };
}

/** What a fleet test starts before its cases: a Redis, a head (a server with --redis and the token), and the one-machine result of the spec. */
export interface FleetFixture {
  redis: TestRedis;
  head: TestServer;
  baseDir: string;
  baseline: { summary: string; episodes: string[] };
}

export async function startFleetFixture(spec: FleetSpec, prefix: string): Promise<FleetFixture> {
  const redis = await startTestRedis();
  const head = await startServer({ token: TOKEN, redis: { redisUrl: redis.url, redisLostMs: 1000 } });
  const baseDir = await mkdtemp(join(tmpdir(), prefix));
  const baseline = await oneMachineResult(baseDir, {
    graphName: spec.graphName,
    episodes: spec.episodeCount,
    seed: spec.seed,
    shardSize: spec.shardSize,
    workers: spec.workerCount,
    latencyMs: spec.overrides.env.step_latency_ms,
  });
  return { redis, head, baseDir, baseline };
}

/** Stops the workers, then the head (cancelling its runs), Redis, and removes the baseline's folder; whatever of it was started. */
export async function stopFleetFixture(f: Partial<FleetFixture>, workers: readonly TestWorker[]): Promise<void> {
  await Promise.allSettled(workers.map((w) => w.stop()));
  await f.head?.stop({ cancelRunning: true });
  await f.redis?.stop();
  if (f.baseDir) await rm(f.baseDir, { recursive: true, force: true });
}
