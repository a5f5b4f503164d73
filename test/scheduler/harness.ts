/** Shared set-up for scheduler tests: a temp outputs dir, a quiet logger, waiting on events. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobScheduler, type JobSchedulerOptions } from '../../src/scheduler/job-scheduler.js';
import type { SchedulerLogger } from '../../src/scheduler/types.js';
import type { RunStatus } from '../../src/statuses.js';
import type { RunSummary } from '../../src/store/types.js';

export class MemoryLogger implements SchedulerLogger {
  readonly lines: string[] = [];
  info(m: string): void {
    this.lines.push(`info ${m}`);
  }
  warn(m: string): void {
    this.lines.push(`warn ${m}`);
  }
  error(m: string): void {
    this.lines.push(`error ${m}`);
  }
}

export interface Harness {
  dir: string;
  logger: MemoryLogger;
  scheduler: JobScheduler;
  /** RUNNING transitions in the order they happened. */
  started: string[];
  /** Latest summary seen per run (from `run` events). */
  last: Map<string, RunSummary>;
}

const live: Array<{ scheduler: JobScheduler; dir: string }> = [];

export async function makeScheduler(
  opts: Partial<JobSchedulerOptions> = {},
  dir?: string,
  beforeStart?: (scheduler: JobScheduler) => void,
): Promise<Harness> {
  const outputsDir = dir ?? mkdtempSync(join(tmpdir(), 'sched-test-'));
  const logger = new MemoryLogger();
  const scheduler = new JobScheduler({
    outputsDir,
    backendUrl: () => 'http://127.0.0.1:9',
    tickIntervalMs: 200,
    sharedHostIdleMs: 60_000,
    cancelGraceMs: 3000,
    // Wide enough that cores never decide admission unless a test sets them (the machine may have 2).
    cores: 64,
    logger,
    ...opts,
  });
  const h: Harness = { dir: outputsDir, logger, scheduler, started: [], last: new Map() };
  scheduler.subscribe((e) => {
    if (e.type !== 'run') return;
    if (e.summary.status === 'RUNNING' && h.last.get(e.runId)?.status !== 'RUNNING') h.started.push(e.runId);
    h.last.set(e.runId, e.summary);
  });
  live.push({ scheduler, dir: outputsDir });
  beforeStart?.(scheduler);
  await scheduler.start();
  return h;
}

/** Closes every scheduler made by makeScheduler (cancelling their runs) and removes the dirs. */
export async function closeAll(): Promise<void> {
  const all = live.splice(0);
  await Promise.all(all.map((x) => x.scheduler.close({ cancelRunning: true })));
  for (const x of all) rmSync(x.dir, { recursive: true, force: true });
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function waitForStatus(h: Harness, runId: string, status: RunStatus | RunStatus[], timeoutMs = 30_000): Promise<RunSummary> {
  const want = Array.isArray(status) ? status : [status];
  return waitFor(
    `run ${runId} to be ${want.join('/')}`,
    () => {
      const s = h.last.get(runId);
      return s && want.includes(s.status) ? s : undefined;
    },
    timeoutMs,
  );
}

/** A gridnav run whose steps each take `latencyMs`, so it is still running when the test looks. */
export const slow = (latencyMs = 50) => ({ env: { step_latency_ms: latencyMs } });

/** True once no process is left in the process group (kill(-pgid, 0) says ESRCH). */
export function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
