/**
 * Finalising a reaped job: its final status (FAILED over its memory budget or on an error,
 * ABORTED or CANCELLED when its process died first, else what the run wrote), _DONE, the
 * process record, its shared hosts released, the catalog row and the events.
 */
import { EvalError, errorMessage } from '../errors.js';
import { isTerminalRunStatus } from '../statuses.js';
import { catalogRunFromSummary } from '../store/catalog.js';
import { isDone, touchDone } from '../store/run-dir.js';
import type { RunSummary } from '../store/types.js';
import type { Job, JobContext } from './job.js';
import { currentSummary, rewriteSummary } from './job-summary.js';
import { earlyExitChange, killGroupLeftovers, recordProcessExit } from './subprocess-job.js';

export async function finalizeJob(job: Job, ctx: JobContext): Promise<RunSummary> {
  const exit = job.exit!;
  killGroupLeftovers(job);
  let summary = exit.kind === 'inProcess' ? exit.summary : await currentSummary(job);
  const done = isDone(job.runDir);
  let change: ((s: RunSummary) => void) | null = null;
  const now = new Date().toISOString();
  if (job.overBudget) {
    const { rssMb, budgetMb } = job.overBudget;
    change = (s) => {
      s.status = 'FAILED';
      s.error = { code: 'OUT_OF_BUDGET', message: `the run's processes used ${Math.round(rssMb)} MB, over its memory budget of ${budgetMb} MB; stopped` };
    };
  } else if (exit.kind === 'error') {
    change = (s) => {
      s.status = 'FAILED';
      s.error = { code: exit.error instanceof EvalError ? exit.error.code : 'INTERNAL_SERVER_ERROR', message: errorMessage(exit.error) };
    };
  } else if (exit.kind === 'process' && (!done || !isTerminalRunStatus(summary.status))) {
    change = await earlyExitChange(job, exit.exit);
  }
  if (change) {
    const apply = change;
    summary = await rewriteSummary(job, (s) => {
      apply(s);
      s.finishedAt ??= now;
      delete s.pid;
    }, summary);
  }
  if (!isDone(job.runDir)) await touchDone(job.runDir);
  if (job.viaSubprocess && job.pid !== null) await recordProcessExit(job, exit, summary, ctx);
  ctx.hosts.release(job.runId);
  ctx.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess, pid: job.pid }));
  ctx.log.info(`run ${job.runId} ${summary.status.toLowerCase()} (${summary.episodesDone}/${summary.episodeCount} episodes)`);
  ctx.emit({ type: 'run', runId: job.runId, summary });
  ctx.emit({ type: 'queue' });
  return summary;
}
