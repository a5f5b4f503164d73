/**
 * Starting an admitted job: its summary goes to RUNNING, then its eval process (or in-process
 * runner) starts. A start that fails becomes the job's exit, so the reap finalises it as FAILED.
 */
import { errorMessage } from '../../errors.js';
import { catalogRunFromSummary } from '../../store/catalog.js';
import { stopJob } from './cancel-job.js';
import { startInProcessJob } from './in-process-job.js';
import { startRemoteJob } from './remote-job.js';
import type { Job, JobContext } from './job.js';
import { rewriteSummary } from './job-summary.js';
import { startSubprocessJob } from './subprocess-job.js';
import { startRunSpan } from './run-span.js';

export async function launchJob(job: Job, ctx: JobContext): Promise<void> {
  try {
    const summary = await rewriteSummary(
      job,
      (s) => {
        s.status = 'RUNNING';
        s.startedAt = job.startedAt;
      },
      job.queuedSummary ?? undefined,
    );
    job.queuedSummary = null;
    ctx.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess }));
    ctx.emit({ type: 'run', runId: job.runId, summary });
    startRunSpan(job);
    if (ctx.remote) startRemoteJob(job, ctx, ctx.remote);
    else if (job.viaSubprocess) await startSubprocessJob(job, ctx);
    else await startInProcessJob(job, ctx);
    // A cancel that came while it was starting had nothing to signal yet.
    if (job.cancelRequested) stopJob(job, ctx);
  } catch (error) {
    ctx.log.error(`run ${job.runId} could not start: ${errorMessage(error)}`);
    job.exit = { kind: 'error', error };
    ctx.requestTick();
  }
}
