/**
 * A job whose episodes run on other machines (scale-out: `evalctl serve --redis`). The
 * scheduler admits it like any run but reserves nothing here; the RemoteRuns it was given
 * hands the run to the fleet and resolves with the final summary, written to the run dir as
 * an eval process would write it. Cancel aborts it, like an in-process run.
 */
import { settlesJob } from './in-process-job.js';
import type { Job, JobContext } from './job.js';
import type { RemoteRuns } from './remote-runs.js';

export type { RemoteRuns } from './remote-runs.js';

/** What a remote run reserves on this machine: nothing (the workers admit its shards by their own resources). */
export const REMOTE_ESTIMATE = { ramMb: 0, vramMb: 0, source: 'declared' as const, cores: 0 };

/** The shared hosts a run gets on this server (submit, retry, recovery): none when runs go to the scale-out fleet, whose workers start their own. */
export const acquireSharedHosts = (
  ctx: Pick<JobContext, 'hosts' | 'remote'>,
  shared: string[],
  runId: string,
): Promise<Record<string, string>> => (ctx.remote ? Promise.resolve({}) : ctx.hosts.acquire(shared, runId));

export function startRemoteJob(job: Job, ctx: JobContext, remote: RemoteRuns): void {
  const abort = new AbortController();
  job.abort = abort;
  job.state = 'running';
  ctx.log.info(`run ${job.runId} handed to the scale-out workers`);
  remote
    .execute({
      spec: job.spec,
      runDir: job.runDir,
      signal: abort.signal,
      onProgress: (n) => {
        job.episodesDone = n;
      },
    })
    .then(...settlesJob(job, ctx));
}
