/**
 * Eval-process benchmarks, in one run:
 * - speedup of 1, 2, 4, 8 workers on gridnav_planner with env.step_latency_ms=20 (a heavy
 *   simulator: workers overlap their waits; target ≥ 0.85 × N at N = 8);
 * - a CPU-bound env: gridnav_planner with env.step_compute_ms=10, so every step spends 10 ms of
 *   CPU in its worker's own env host, like a simulator's physics (target ≥ 1.7× at 2 workers on
 *   2 cores; both runs use the same settings);
 * - the time from the eval process's start to its first episode with 8 workers (target ≤ 1 s).
 * Speedups compare the episode phase (first episode start → last episode end), beside the
 * whole run including host start-up; "balance bound" is the best speedup the way episodes
 * fell to workers allows (total steps / steps of the busiest worker). Worker 0 starts as soon as its own
 * hosts are up and the other workers' hosts boot meanwhile, so the episode phase also holds
 * their start-up; "worker span" is the longest time one worker spent from its first episode's
 * start to its last episode's end, which leaves that start-up out. Needs a build (hosts and the eval
 * process run from dist/). Run alone: `node --import tsx bench/eval.ts`.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { runBatch } from '../src/eval-process/run-batch.js';
import { EVAL_PROCESS_MAIN, HOST_MAIN } from '../src/paths.js';
import { createRunDir, writeSpec } from '../src/store/run-dir.js';
import type { RunSpec } from '../src/store/types.js';
import { runSpecSchema } from '../src/spec/run-spec.js';

const WORKER_COUNTS = [1, 2, 4, 8];
const TARGET_LATENCY_EFFICIENCY = 0.85;
const TARGET_CPU_SPEEDUP_AT_2 = 1.7;
const TARGET_STARTUP_MS = 1000;
const STARTUP_ROUNDS = 3;
/** CPU time each env step spends in its host in the CPU-bound table (the same for every worker count). */
const CPU_STEP_COMPUTE_MS = 10;

type SpecInput = Partial<RunSpec> & Pick<RunSpec, 'graphName' | 'episodeCount'>;

async function makeRunDir(outputs: string, input: SpecInput): Promise<string> {
  const { runId, dir } = createRunDir(outputs);
  const spec = runSpecSchema.parse({ runId, createdAt: new Date().toISOString(), ...input });
  await writeSpec(dir, spec);
  return dir;
}

interface Timing {
  workers: number;
  totalMs: number;
  episodePhaseMs: number;
  /** The longest first-episode-start → last-episode-end of one worker. */
  workerSpanMs: number;
  balanceBound: number;
  steps: number;
}

async function timeRun(outputs: string, input: SpecInput, workers: number): Promise<Timing> {
  const dir = await makeRunDir(outputs, { ...input, workerCount: workers });
  const t0 = performance.now();
  let firstStart = 0;
  const workerStart = new Map<number, number>();
  const workerEnd = new Map<number, number>();
  const summary = await runBatch({
    runDir: dir,
    onEpisodeStart: ({ workerId }) => {
      const now = performance.now();
      firstStart ||= now;
      if (!workerStart.has(workerId)) workerStart.set(workerId, now);
    },
    onEpisode: (record) => {
      workerEnd.set(record.workerId, performance.now());
    },
  });
  const end = performance.now();
  const workerSpanMs = Math.max(...[...workerStart].map(([w, start]) => (workerEnd.get(w) ?? end) - start));
  if (summary.status !== 'COMPLETED')
    throw new Error(`bench run ${summary.runId} ended ${summary.status}: ${summary.error?.message ?? ''}`);
  const steps = summary.episodes.map((e) => e.steps);
  const stepsByWorker = new Map<number, number>();
  for (const e of summary.episodes) stepsByWorker.set(e.workerId, (stepsByWorker.get(e.workerId) ?? 0) + e.steps);
  const chunkSteps = [...stepsByWorker.values()];
  const total = steps.reduce((a, b) => a + b, 0);
  return {
    workers,
    totalMs: end - t0,
    episodePhaseMs: end - firstStart,
    workerSpanMs,
    balanceBound: total / Math.max(...chunkSteps),
    steps: total,
  };
}

function table(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  return all.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')).join('\n');
}

const s = (ms: number) => (ms / 1000).toFixed(2);
const x = (v: number) => `${v.toFixed(2)}×`;

async function speedupTable(outputs: string, title: string, input: SpecInput, target: (n: number) => string): Promise<Timing[]> {
  const timings: Timing[] = [];
  for (const n of WORKER_COUNTS) timings.push(await timeRun(outputs, input, n));
  const base = timings[0]!;
  const rows = timings.map((t) => [
    String(t.workers),
    s(t.totalMs),
    s(t.episodePhaseMs),
    x(base.episodePhaseMs / t.episodePhaseMs),
    x(base.totalMs / t.totalMs),
    s(t.workerSpanMs),
    x(base.workerSpanMs / t.workerSpanMs),
    x(t.balanceBound),
    target(t.workers),
  ]);
  console.log(`\n${title}: ${input.episodeCount} episodes, ${base.steps} steps in all`);
  console.log(
    table(
      ['workers', 'run s', 'episodes s', 'speedup', 'speedup (run)', 'worker span s', 'speedup (span)', 'balance bound', 'target'],
      rows,
    ),
  );
  return timings;
}

/** Spawns the eval process with 8 workers and reads when its first episode started (its own clock and ours). */
async function startupOnce(outputs: string): Promise<{ sinceProcessStartMs: number; sinceSpawnMs: number; allHostsMs: number }> {
  const dir = await makeRunDir(outputs, { graphName: 'gridnav_planner', episodeCount: 8, workerCount: 8, dataset: 'mini' });
  const t0 = performance.now();
  const child = execa(process.execPath, [EVAL_PROCESS_MAIN, '--run-dir', dir], { stdin: 'ignore', buffer: false, reject: false });
  let sinceProcessStartMs = NaN;
  let sinceSpawnMs = NaN;
  let allHostsMs = NaN;
  const stamp = (line: string) => Number(/\[eval \+(\d+)ms\]/.exec(line)?.[1]);
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.includes('first episode started') && Number.isNaN(sinceProcessStartMs)) {
      sinceSpawnMs = performance.now() - t0;
      sinceProcessStartMs = stamp(line);
    }
    if (line.includes('] all ') && line.includes('host(s) ready')) allHostsMs = stamp(line);
  });
  const r = await child;
  if (r.exitCode !== 0) throw new Error(`eval process exited ${r.exitCode ?? r.signal}`);
  return { sinceProcessStartMs, sinceSpawnMs, allHostsMs };
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

export async function benchEval(): Promise<void> {
  for (const f of [HOST_MAIN, EVAL_PROCESS_MAIN])
    if (!existsSync(f)) throw new Error(`${f} is missing: build first (npm run build:server)`);
  const outputs = await mkdtemp(join(tmpdir(), 'bench-eval-'));
  try {
    console.log(
      `Eval process on ${availableParallelism()} CPU(s); wall-clock figures on a shared machine vary, the ratios are what to read.`,
    );
    const latency = await speedupTable(
      outputs,
      'gridnav_planner with env.step_latency_ms=20 (mini mazes)',
      { graphName: 'gridnav_planner', episodeCount: 64, dataset: 'mini', overrides: { env: { step_latency_ms: 20 } } },
      (n) => `≥ ${x(TARGET_LATENCY_EFFICIENCY * n)}`,
    );
    const cpu = await speedupTable(
      outputs,
      `gridnav_planner with env.step_compute_ms=${CPU_STEP_COMPUTE_MS}, CPU-bound: every step spends ${CPU_STEP_COMPUTE_MS} ms of CPU in the worker's env host (standard mazes)`,
      { graphName: 'gridnav_planner', episodeCount: 40, overrides: { env: { step_compute_ms: CPU_STEP_COMPUTE_MS } } },
      (n) => (n === 2 ? `≥ ${x(TARGET_CPU_SPEEDUP_AT_2)}` : ''),
    );

    const rounds = [];
    for (let i = 0; i < STARTUP_ROUNDS; i++) rounds.push(await startupOnce(outputs));
    console.log(`\nStart-up with 8 workers (9 hosts: env_gridnav#0…#7 + planner), median of ${STARTUP_ROUNDS}`);
    console.log(
      table(
        ['measure', 'ms', 'target'],
        [
          ['process start → first episode started', median(rounds.map((r) => r.sinceProcessStartMs)).toFixed(0), `≤ ${TARGET_STARTUP_MS}`],
          ['spawn call → first episode started', median(rounds.map((r) => r.sinceSpawnMs)).toFixed(0), ''],
          ['process start → all 9 hosts up', median(rounds.map((r) => r.allHostsMs)).toFixed(0), ''],
        ],
      ),
    );
    const at8 = latency.find((t) => t.workers === 8)!;
    const at2 = cpu.find((t) => t.workers === 2)!;
    console.log(
      `\nsummary: latency-bound speedup at 8 workers ${x(latency[0]!.episodePhaseMs / at8.episodePhaseMs)}, ${x(latency[0]!.workerSpanMs / at8.workerSpanMs)} over worker spans (target ≥ ${x(TARGET_LATENCY_EFFICIENCY * 8)}), ` +
        `CPU-bound speedup at 2 workers ${x(cpu[0]!.episodePhaseMs / at2.episodePhaseMs)}, ${x(cpu[0]!.workerSpanMs / at2.workerSpanMs)} over worker spans (target ≥ ${x(TARGET_CPU_SPEEDUP_AT_2)}), ` +
        `start-up ${median(rounds.map((r) => r.sinceProcessStartMs)).toFixed(0)} ms (target ≤ ${TARGET_STARTUP_MS} ms)`,
    );
  } finally {
    await rm(outputs, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchEval().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
