/**
 * Scale-out over Redis on a latency-bound env (gridnav_planner, env.step_latency_ms=20):
 * the same episodes on one machine (`evalctl run`, 2 workers) and on a fleet of 3
 * `evalctl worker`s × 2 slots (each shard one eval process with 1 worker, so 6 episodes at a
 * time against 2: 3× at best) behind a head with --redis. Prints both wall times, the
 * throughput ratio, and the Redis path's per-episode overhead: from an episode's finishedAt
 * on its worker to its episode.json committed on the head (IPC notice, reading the folder,
 * the HTTP commit, the head's writes), p50 and p95. Workers are started (warm) before the
 * clock starts, as a fleet would be. All processes run on this machine: on few cores the
 * fleet's eval processes compete with each other and with the head.
 *
 * Flags: --episodes N (default 96, the issue's own run: 12 shards, two per slot), --shard-size N (default 8), --latency MS (default 20).
 */
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { buildApp } from '../src/app.js';
import type { EpisodeRecord } from '../src/store/types.js';
import { startTestRedis } from '../test/scaleout/redis-server.js';
import { greedyMakespan } from './scaling.js';

const MAIN = resolve('dist/main.js');
const quiet = { info: () => {}, warn: () => {}, error: (m: string) => process.stderr.write(`[head] ${m}\n`) };

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

/** A run's episode records, each with its episode.json's mtime; read once for every figure below. */
async function recordsOf(runDir: string): Promise<{ record: EpisodeRecord; mtimeMs: number }[]> {
  const out: { record: EpisodeRecord; mtimeMs: number }[] = [];
  for (const name of await readdir(join(runDir, 'episodes'))) {
    const path = join(runDir, 'episodes', name, 'episode.json');
    out.push({ record: JSON.parse(await readFile(path, 'utf8')) as EpisodeRecord, mtimeMs: statSync(path).mtimeMs });
  }
  return out;
}

type Records = Awaited<ReturnType<typeof recordsOf>>;

/** Per episode: its episode.json's mtime less its record's finishedAt (what the write path adds before the episode counts). */
const commitLags = (records: Records): number[] => records.map((r) => r.mtimeMs - Date.parse(r.record.finishedAt));

/**
 * The best ratio these episodes allow with no overhead at all: one machine's 2 workers taking
 * episodes in order against 6 slots taking shards of `shardSize` in order, in steps.
 */
function ratioCap(records: Records, shardSize: number): number {
  const steps: number[] = [];
  for (const { record } of records) steps[record.index] = record.steps;
  const shards: number[] = [];
  for (let i = 0; i < steps.length; i += shardSize) shards.push(steps.slice(i, i + shardSize).reduce((a, b) => a + b, 0));
  return greedyMakespan(steps, 2) / greedyMakespan(shards, 6);
}

/** Mean wall time per step inside episodes, and the share of slots × wall time spent inside episodes. */
function slotUse(records: Records, wallMs: number, slots: number): { msPerStep: number; busy: number } {
  const ms = records.reduce((sum, r) => sum + r.record.durationMs, 0);
  const steps = records.reduce((sum, r) => sum + r.record.steps, 0);
  return { msPerStep: ms / Math.max(1, steps), busy: ms / (slots * wallMs) };
}

export async function benchScaleout(flags: string[]): Promise<void> {
  const { values } = parseArgs({
    args: flags,
    options: { episodes: { type: 'string' }, 'shard-size': { type: 'string' }, latency: { type: 'string' } },
    strict: false,
  });
  const episodes = Number(values.episodes ?? 96);
  const shardSize = Number(values['shard-size'] ?? 8);
  const latency = Number(values.latency ?? 20);
  const dir = await mkdtemp(join(tmpdir(), 'bench-scaleout-'));
  const redis = await startTestRedis();
  const app = buildApp({ outputsDir: join(dir, 'head'), logger: quiet, webDir: join(dir, 'no-web'), redis: { redisUrl: redis.url } });
  const workers: ReturnType<typeof execa>[] = [];
  try {
    // One machine: 2 workers.
    const t0 = performance.now();
    const local = await execa(
      process.execPath,
      [
        MAIN,
        'run',
        'gridnav_planner',
        '--episodes',
        String(episodes),
        '--workers',
        '2',
        '--seed',
        '7',
        '--set',
        `env.step_latency_ms=${latency}`,
        '--outputs',
        join(dir, 'local'),
        '--json',
      ],
      { reject: false },
    );
    const localMs = performance.now() - t0;
    if (local.exitCode !== 0) throw new Error(`local run failed: ${local.stderr.slice(-500)}`);
    const [localId] = await readdir(join(dir, 'local', 'eval_runs'));
    const localRecords = await recordsOf(join(dir, 'local', 'eval_runs', localId!));
    const localLag = commitLags(localRecords);

    // The fleet: 3 workers × 2 slots, warm before the clock starts.
    const { url } = await app.start(0);
    for (const name of ['a', 'b', 'c']) {
      const w = execa(
        process.execPath,
        [
          MAIN,
          'worker',
          '--redis',
          redis.url,
          '--server',
          url,
          '--slots',
          '2',
          '--cores',
          '64',
          '--name',
          name,
          '--work-dir',
          join(dir, `worker-${name}`),
        ],
        { reject: false, stdin: 'ignore', forceKillAfterDelay: 3000, cleanup: true },
      );
      workers.push(w);
      await new Promise<void>((ok) => w.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && ok()));
    }
    const t1 = performance.now();
    const run = await app.scheduler.submit({
      graphName: 'gridnav_planner',
      episodeCount: episodes,
      workerCount: 1,
      seed: 7,
      shardSize,
      overrides: { env: { step_latency_ms: latency } },
    });
    const runDir = join(dir, 'head', 'eval_runs', run.runId);
    while (!existsSync(join(runDir, '_DONE'))) await new Promise((r) => setTimeout(r, 20));
    const fleetMs = performance.now() - t1;
    const summary = JSON.parse(await readFile(join(runDir, 'summary.json'), 'utf8')) as { status: string };
    const fleetRecords = await recordsOf(runDir);
    const overhead = commitLags(fleetRecords);
    const ratio = localMs / fleetMs;
    const localUse = slotUse(localRecords, localMs, 2);
    const fleetUse = slotUse(fleetRecords, fleetMs, 6);
    console.log(`gridnav_planner, ${episodes} episodes, env.step_latency_ms=${latency}, shard size ${shardSize}`);
    console.log(
      `  one machine, 2 workers:           ${(localMs / 1000).toFixed(1)} s  (${((episodes * 1000) / localMs).toFixed(2)} episodes/s)`,
    );
    console.log(
      `  3 workers x 2 slots over Redis:   ${(fleetMs / 1000).toFixed(1)} s  (${((episodes * 1000) / fleetMs).toFixed(2)} episodes/s), ${summary.status}`,
    );
    const cap = ratioCap(localRecords, shardSize);
    console.log(
      `  throughput ratio: ${ratio.toFixed(2)}x (target >= 2.5x ${ratio >= 2.5 ? 'met' : 'NOT met'}; these episodes' lengths allow ${cap.toFixed(2)}x with no overhead, 3x if all were equal)`,
    );
    console.log(
      `  finishedAt -> episode.json in the run dir, p50 / p95: one machine ${pct(localLag, 50).toFixed(1)} / ${pct(localLag, 95).toFixed(1)} ms, over Redis ${pct(overhead, 50).toFixed(1)} / ${pct(overhead, 95).toFixed(1)} ms`,
    );
    console.log(
      `  where the time went: wall time per step in an episode ${localUse.msPerStep.toFixed(2)} ms on one machine, ${fleetUse.msPerStep.toFixed(2)} ms on the fleet; ` +
        `slots busy with episodes ${(localUse.busy * 100).toFixed(0)} % on one machine, ${(fleetUse.busy * 100).toFixed(0)} % on the fleet (the rest: start-ups, hand-offs, waiting on the last shard)`,
    );
    console.log(
      `  per-episode overhead of the Redis path (p50 difference): ${(pct(overhead, 50) - pct(localLag, 50)).toFixed(1)} ms (target p50 <= 20 ms)`,
    );
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    await Promise.allSettled(workers);
    await app.stop({ cancelRunning: true });
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
