/**
 * Cancelling a job: a queued one is finished on the spot; a running one is stopped gently,
 * then forced (SIGTERM to its process group, SIGKILL after the grace), and the reap finalises it.
 */
import { catalogRunFromSummary } from '../../store/catalog.js';
import { touchDone } from '../../store/run-dir.js';
import type { RunSummary } from '../../store/types.js';
import type { Job, JobContext } from './job.js';
import { currentSummary, rewriteSummary } from './job-summary.js';
import { restoreUnplayed } from '../../store/attempts.js';
import { isPidAlive } from '../admission/resource-sampler.js';
import { groupAlive, signalGroup } from './spawn-eval.js';

/** Finishes a job already taken out of the queue: CANCELLED, _DONE, its shared hosts released. */
export async function cancelQueuedJob(job: Job, ctx: JobContext): Promise<RunSummary> {
  job.cancelRequested = true;
  const queued = job.queuedSummary ?? (await currentSummary(job));
  // A retry cancelled while queued played nothing: its episodes' earlier records come back.
  const base = (await restoreUnplayed(job.runDir, queued)) ?? queued;
  const summary = await rewriteSummary(
    job,
    (s) => {
      s.status = 'CANCELLED';
      s.finishedAt = new Date().toISOString();
      s.error = null;
    },
    base,
  );
  await touchDone(job.runDir);
  ctx.hosts.release(job.runId);
  ctx.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess }));
  ctx.emit({ type: 'run', runId: job.runId, summary });
  ctx.emit({ type: 'queue' });
  ctx.requestTick();
  return summary;
}

/** SIGTERM to the process group and our own SIGKILL timer; an in-process run is aborted. */
export function stopJob(job: Job, ctx: Pick<JobContext, 'cancelGraceMs' | 'log'>): void {
  if (job.abort) {
    job.abort.abort(new Error('cancelled'));
    return;
  }
  if (job.pid === null) return; // still starting: launchJob() stops it once spawned
  signalGroup(job.pid, 'SIGTERM');
  if (job.killTimer) return;
  const pid = job.pid;
  job.killTimer = setTimeout(() => {
    job.killTimer = null;
    if (!job.exit || groupAlive(pid)) {
      if (signalGroup(pid, 'SIGKILL')) ctx.log.warn(`run ${job.runId}: still running ${ctx.cancelGraceMs} ms after SIGTERM; sent SIGKILL`);
    }
  }, ctx.cancelGraceMs);
}

/** Resolves when every job has exited, or after `timeoutMs`, whichever is first. */
export async function waitForExits(jobs: readonly Job[], timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  try {
    await Promise.race([Promise.allSettled(jobs.map(exitOf)), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function exitOf(job: Job): Promise<void> {
  if (job.exit) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      if (job.exit || (job.adopted && job.pid !== null && !isPidAlive(job.pid))) {
        clearInterval(poll);
        resolve();
      }
    }, 20);
    // A job that never exits must not keep the process alive after close() gave up on it.
    poll.unref();
  });
}
