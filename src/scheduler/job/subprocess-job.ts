/**
 * A job in its own eval process: spawning it, and what its exit means once it is reaped: an
 * exit before a terminal summary is ABORTED with the exit code or signal and the last stderr
 * line (CANCELLED, with no error, when a cancel was asked for); process.json gets the exit and peak RSS; a completed run's
 * peak RSS becomes a calibration sample for the next estimate of its graph.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeJsonAtomic } from '../../store/atomic.js';
import { readProcessRecord } from '../../store/catalog.js';
import { FILES } from '../../store/run-dir.js';
import { describeStorage, exitStorageFault, type StorageCode } from '../../store/storage-fault.js';
import type { RunSummary } from '../../store/types.js';
import { cpuCoresOf, type Job, type JobContext, type JobExit } from './job.js';
import { effectiveWorkerCount } from '../../spec/effective-workers.js';
import { groupAlive, signalGroup, spawnEvalProcess, type EvalExit } from './spawn-eval.js';
import { hostSecretsEnv } from '../../host/host-secret.js';
import { TRACEPARENT_ENV } from '../../tracing/traceparent.js';
import { HEARTBEAT_ENV, heartbeatMsFor } from '../../eval-process/heartbeat.js';

/** Spawns the eval process; its exit sets `job.exit` and asks for a tick; anything it sends counts as its heartbeat. */
export async function startSubprocessJob(job: Job, ctx: JobContext): Promise<void> {
  job.heardAtMs = performance.now();
  const child = await spawnEvalProcess({
    evalProcessMain: ctx.evalProcessMain,
    runDir: job.runDir,
    backendUrl: ctx.backendUrl(),
    ...(job.spec.activeWorkspaceDir ? { workspaceDir: job.spec.activeWorkspaceDir } : {}),
    // The secrets of the shared hosts it borrows: in its environment, which it clears as it starts.
    env: {
      ...hostSecretsEnv(Object.values(ctx.hosts.urls(job.sharedNodesets))),
      // Its episode spans go under this process's run span, in the same trace.
      ...(job.trace ? { [TRACEPARENT_ENV]: job.trace.traceparent } : {}),
      ...(ctx.evalHungMs > 0 ? { [HEARTBEAT_ENV]: String(heartbeatMsFor(ctx.evalHungMs)) } : {}),
    },
    onMessage: () => {
      job.heardAtMs = performance.now();
    },
  });
  job.child = child;
  job.pid = child.pid;
  job.state = 'running';
  ctx.catalog.upsertRun({ id: job.runId, pid: child.pid });
  ctx.log.info(`run ${job.runId} started (pid ${child.pid}, ${job.spec.workerCount} worker(s), reserving ${job.estimate.ramMb} MB RAM)`);
  void child.exited.then((exit) => {
    job.exit = { kind: 'process', exit };
    ctx.requestTick();
  });
}

/**
 * Whether the job's eval process has been silent past the hung limit: set `job.hung` and true
 * then (the caller stops it). Only a process this scheduler started has a channel to hear: an
 * adopted one (after a restart) is not judged, nor a run being cancelled (its grace applies).
 */
export function isHung(job: Job, ctx: Pick<JobContext, 'evalHungMs'>, nowMs: number): boolean {
  if (ctx.evalHungMs <= 0 || !job.viaSubprocess || job.child === null || job.state !== 'running') return false;
  if (job.exit || job.hung || job.cancelRequested) return false;
  const silentMs = nowMs - job.heardAtMs;
  if (silentMs <= ctx.evalHungMs) return false;
  job.hung = { silentMs, limitMs: ctx.evalHungMs };
  return true;
}

/** The summary change for a run killed as hung: ABORTED, code HUNG; one that completed meanwhile stays COMPLETED. */
export function hungChange(job: Job, exit: EvalExit): (s: RunSummary) => void {
  const { silentMs, limitMs } = job.hung!;
  const how = exit.signal ? `, then was killed by ${exit.signal}` : '';
  return (s) => {
    if (s.status === 'COMPLETED') return;
    s.status = 'ABORTED';
    s.error = {
      code: 'HUNG',
      message: `the eval process (pid ${job.pid}) sent no heartbeat for ${(silentMs / 1000).toFixed(1)} s (limit ${limitMs / 1000} s): it was stopped or a call held its main thread${how}; its finished episodes are kept`,
    };
  };
}

/** Anything the eval process left in its group goes too (its hosts have groups of their own and end on stdin EOF). */
export function killGroupLeftovers(job: Job): void {
  if (job.viaSubprocess && job.pid !== null && groupAlive(job.pid)) signalGroup(job.pid, 'SIGKILL');
}

/**
 * The summary change for an eval process that exited before writing a terminal summary. A
 * storage fault (known from its exit code, the scheduler, or its last stderr line) is FAILED
 * with that code, whoever asked for a stop: the disk, not the request, ended it.
 */
export async function earlyExitChange(job: Job, exit: EvalExit, storage: StorageCode | null = null): Promise<(s: RunSummary) => void> {
  const { code: fault, lastStderr: last } = await exitStorageFault(join(job.runDir, FILES.stderr), storage);
  const why = describeExit(exit, job.adopted) + (last ? ` (last stderr line: ${last})` : '');
  if (fault) {
    return (s) => {
      s.status = 'FAILED';
      s.error = { code: fault, message: `${describeStorage(fault, job.runDir)}; the eval process ${why}` };
    };
  }
  // A cancel reads the same whatever moment it caught the process at (even before it could
  // install its signal handlers): CANCELLED, no error. The exit stays in process.json and the log.
  return job.cancelRequested
    ? (s) => {
        s.status = 'CANCELLED';
        s.error = null;
      }
    : (s) => {
        s.status = 'ABORTED';
        s.error = { code: 'ABORTED', message: `the eval process ${why} before finishing` };
      };
}

/** Adds the exit and peak RSS to process.json; a completed run's peak RSS calibrates its graph. */
export async function recordProcessExit(job: Job, exit: JobExit, summary: RunSummary, ctx: JobContext): Promise<void> {
  const rec = await readProcessRecord(job.runDir);
  const measured = cpuCoresOf(job);
  const cores = measured === null ? null : Math.round(measured * 100) / 100;
  if (rec) {
    await writeJsonAtomic(join(job.runDir, FILES.process), {
      ...rec,
      ...(job.peakRssMb > 0 ? { peakRssMb: Math.round(job.peakRssMb) } : {}),
      ...(job.peakVramMb > 0 ? { peakVramMb: Math.round(job.peakVramMb) } : {}),
      ...(cores !== null ? { cpuCores: cores } : {}),
      exitCode: exit.kind === 'process' ? exit.exit.exitCode : null,
      signal: exit.kind === 'process' ? exit.exit.signal : null,
      ...(exit.kind === 'process' && exit.exit.exitedAt ? { exitedAt: exit.exit.exitedAt } : {}),
    }).catch(() => {});
  }
  if (summary.status === 'COMPLETED' && job.peakRssMb > 0) {
    ctx.catalog.recordCalibration(
      job.spec.graphName,
      effectiveWorkerCount(job.spec),
      Math.round(job.peakRssMb),
      Math.round(job.peakVramMb),
      cores ?? undefined,
    );
  }
}

function describeExit(e: EvalExit, adopted: boolean): string {
  if (e.signal) return `was killed by ${e.signal}`;
  if (e.exitCode !== null) return `exited with code ${e.exitCode}`;
  return adopted ? 'exited while the backend was restarting' : 'exited';
}
