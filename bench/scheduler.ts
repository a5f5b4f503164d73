/**
 * Scheduler benchmarks: submit latency, the delay from one run's exit to the next queued run's
 * spawn, the cost of one tick with 1,000 queued runs, and the resource sampler's cost per tick.
 * The exit→spawn figure uses a stand-in eval process that exits at once, so it measures the
 * scheduler (reap → admit → spawn), not an eval process's cold start. Needs a build (shared
 * hosts run from dist/). Run alone: `node --import tsx bench/scheduler.ts`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../src/paths.js';
import { JobScheduler } from '../src/scheduler/job-scheduler.js';
import { ResourceSampler, type ResourceSample, type ResourceSource } from '../src/scheduler/admission/resource-sampler.js';
import type { SchedulerLogger } from '../src/scheduler/types.js';
import type { ProcessRecord } from '../src/store/catalog.js';

const TARGET_EXIT_TO_SPAWN_MS = 50;
const TARGET_TICK_MS = 5;
const QUEUED = 1000;
const CHAIN = 20;
const TICKS = 50;

const INSTANT_MAIN = join(PACKAGE_ROOT, 'bench', 'fixtures', 'instant-eval-main.mjs');
const quiet: SchedulerLogger = { info() {}, warn() {}, error: (m) => console.error(m) };

/** Room for exactly one one-worker gridnav run at a time (its estimate is 200 MB). */
class OneAtATime implements ResourceSource {
  ramFreeMb = 300;
  async sample(): Promise<ResourceSample> {
    return { ramTotalMb: 16_000, ramFreeMb: this.ramFreeMb, vramTotalMb: null, vramFreeMb: null };
  }
  async processTreeRssMb(): Promise<number> {
    return 0;
  }
}

function table(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  return all.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')).join('\n');
}

const fmt = (n: number, digits = 2): string => n.toFixed(digits);
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: pct(s, 0.5), p99: pct(s, 0.99), max: s[s.length - 1]!, mean: xs.reduce((a, b) => a + b, 0) / xs.length };
};

async function timeIt(n: number, f: () => Promise<unknown>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await f();
    ms.push(performance.now() - t0);
  }
  return ms;
}

export async function benchScheduler(): Promise<void> {
  const rows: string[][] = [];
  const dirs: string[] = [];
  const outputs = () => {
    const d = mkdtempSync(join(tmpdir(), 'bench-sched-'));
    dirs.push(d);
    return d;
  };
  try {
    // 1. Submit latency and one tick over 1,000 queued runs (nothing fits, so every run gets its reason).
    {
      const sampler = new OneAtATime();
      const s = new JobScheduler({
        outputsDir: outputs(),
        backendUrl: () => 'http://127.0.0.1:9',
        sampler,
        logger: quiet,
        tickIntervalMs: 60_000,
        queueCapacity: QUEUED + 1,
      });
      const release = s.acquireInteractiveLock('bench');
      await s.start();
      await s.submit({ graphName: 'gridnav_planner', episodeCount: 1 }); // starts the shared planner host once
      let i = 0;
      const submits = await timeIt(QUEUED - 1, () => s.submit({ graphName: 'gridnav_planner', episodeCount: 10, priority: i++ % 3 }));
      const sub = stats(submits);
      rows.push(['submit (host already up)', fmt(sub.p50), fmt(sub.p99), '', '']);
      release();
      sampler.ramFreeMb = 0;
      await s.tick();
      const ticks = stats(await timeIt(TICKS, () => s.tick()));
      rows.push([
        `tick, ${QUEUED} queued, fixed readings`,
        fmt(ticks.p50),
        fmt(ticks.p99),
        `≤ ${TARGET_TICK_MS}`,
        ticks.p50 <= TARGET_TICK_MS ? 'yes' : 'NO',
      ]);
      if (s.queue().length !== QUEUED) throw new Error(`expected ${QUEUED} queued, got ${s.queue().length}`);
      await s.close({ cancelRunning: true });
    }

    // 2. Sampler cost: what a tick pays to read the machine, beside the RSS walk of one process tree.
    {
      const real = new ResourceSampler();
      await real.sample();
      const sample = stats(await timeIt(200, () => real.sample()));
      rows.push(['sampler.sample() (RAM; VRAM cached)', fmt(sample.p50), fmt(sample.p99), '', '']);
      const rss = stats(await timeIt(50, () => real.processTreeRssMb(process.pid)));
      rows.push(['processTreeRssMb (/proc walk)', fmt(rss.p50), fmt(rss.p99), '', '']);
      rows.push([
        `  GPU present: ${(await real.hasNvidiaGpu()) ? 'yes (VRAM via nvidia-smi, async, every 2 s)' : 'no (VRAM from the static ledger)'}`,
        '',
        '',
        '',
        '',
      ]);
    }

    // 3. Exit → spawn: a chain of runs where only one fits at a time.
    {
      const s = new JobScheduler({
        outputsDir: outputs(),
        backendUrl: () => 'http://127.0.0.1:9',
        sampler: new OneAtATime(),
        logger: quiet,
        evalProcessMain: INSTANT_MAIN,
        tickIntervalMs: 60_000, // only the exit-triggered ticks can admit
      });
      await s.start();
      const release = s.acquireInteractiveLock('bench');
      const ids: string[] = [];
      for (let i = 0; i <= CHAIN; i++) ids.push((await s.submit({ graphName: 'gridnav_planner', episodeCount: 1 })).runId);
      const finished = new Promise<void>((resolve) => {
        let n = 0;
        s.subscribe((e) => {
          if (e.type === 'run' && e.summary.status === 'COMPLETED' && ++n === ids.length) resolve();
        });
      });
      release();
      await finished;
      await s.catalog.flush();
      const fromChild: number[] = [];
      const fromEvent: number[] = [];
      const proc = (id: string) => JSON.parse(readFileSync(join(s.getRunDir(id), 'process.json'), 'utf8')) as ProcessRecord;
      for (let i = 1; i < ids.length; i++) {
        const exitAt = Number(readFileSync(join(s.getRunDir(ids[i - 1]!), 'exit_at'), 'utf8'));
        const spawnedAt = Date.parse(proc(ids[i]!).startedAt);
        fromChild.push(spawnedAt - exitAt);
        const seen = proc(ids[i - 1]!).exitedAt;
        if (seen) fromEvent.push(spawnedAt - Date.parse(seen));
      }
      const d = stats(fromChild);
      rows.push([
        `exit → next spawn (${CHAIN} hand-overs)`,
        fmt(d.p50, 1),
        fmt(d.p99, 1),
        `≤ ${TARGET_EXIT_TO_SPAWN_MS}`,
        d.p50 <= TARGET_EXIT_TO_SPAWN_MS ? 'yes' : 'NO',
      ]);
      if (fromEvent.length > 0) {
        const e = stats(fromEvent);
        rows.push(['  of which exit event → spawn', fmt(e.p50, 1), fmt(e.p99, 1), '', '']);
      }
      await s.close({ cancelRunning: true });
    }
    console.log(table(['scheduler', 'p50 ms', 'p99 ms', 'target', 'met'], rows));
    console.log("(exit → spawn: from the child writing its exit time to the next child's recorded start, wall clock, ms resolution)");
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchScheduler().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
