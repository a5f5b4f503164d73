/**
 * A job run inside the backend (viaSubprocess: false): runBatch with an AbortController, so
 * cancel aborts it; its returned summary (or its error) is the job's exit.
 */
import type { RunSummary } from '../../store/types.js';
import type { Job, JobContext } from './job.js';

export async function startInProcessJob(job: Job, ctx: JobContext): Promise<void> {
  const { runBatch } = await import('../../eval-process/run-batch.js');
  const abort = new AbortController();
  job.abort = abort;
  job.state = 'running';
  ctx.log.info(`run ${job.runId} started in the backend process`);
  runBatch({
    runDir: job.runDir,
    signal: abort.signal,
    sharedUrls: ctx.hosts.urls(job.sharedNodesets),
    ...(job.trace ? { traceparent: job.trace.traceparent } : {}),
    bindSharedHostMover: (move) => {
      job.moveSharedHost = move;
    },
    onSummary: (s) => {
      job.episodesDone = s.episodesDone;
    },
  }).then(...settlesJob(job, ctx));
}

/** The two ends of a job whose run this process awaits (in the backend, or on the fleet): its summary or its error becomes its exit. */
export function settlesJob(job: Job, ctx: JobContext): [(summary: RunSummary) => void, (error: unknown) => void] {
  return [
    (summary) => {
      job.exit = { kind: 'inProcess', summary };
      ctx.requestTick();
    },
    (error) => {
      job.exit = { kind: 'error', error };
      ctx.requestTick();
    },
  ];
}
