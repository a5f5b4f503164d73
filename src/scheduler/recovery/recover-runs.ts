/**
 * Restart recovery, acting on what scanUnfinishedRuns found: queued runs are queued again
 * (with new shared hosts), a still-running eval process is adopted and watched until it exits,
 * and a run that cannot go on is finished ABORTED or FAILED, keeping its finished episodes.
 */
import { join } from 'node:path';
import { RunPolicyError, errorMessage } from '../../errors.js';
import { SpecInvalidError } from '../../spec/spec-errors.js';
import { restoreUnplayed } from '../../store/attempts.js';
import { catalogRunFromSummary } from '../../store/catalog.js';
import { FILES, touchDone, writeSharedUrls, writeSummary } from '../../store/run-dir.js';
import { describeStorage, exitStorageFault, storageCodeOf, storageCodeOfExit } from '../../store/storage-fault.js';
import type { RunSpec, RunSummary } from '../../store/types.js';
import { estimateRun, nodesetCosts } from '../admission/estimate.js';
import { effectiveWorkerCount } from '../../spec/effective-workers.js';
import type { Job, JobContext } from '../job/job.js';
import { queuedSummary } from '../job/job-summary.js';
import { acquireSharedHosts } from '../job/remote-job.js';
import { isEvalProcessOf, scanUnfinishedRuns, type UnfinishedRun } from './recovery.js';
import { inspectRunGraph, type GraphDirs } from '../run-graph.js';
import type { RunPolicy } from '../../spec/run-policy.js';
import type { ResourceEstimate } from '../types.js';

export interface RecoverRunsOptions {
  outputsDir: string;
  graphDirs: GraphDirs;
  ctx: JobContext;
  /** The operator's rules as this server has them: a queued run re-queued after a restart has not run its tools yet. */
  policy?: RunPolicy | undefined;
  /** A new job record, numbered in submission order. */
  newJob(spec: RunSpec, runDir: string, estimate: ResourceEstimate, shared: string[]): Job;
  /** Puts a recovered run back in the queue. */
  enqueue(job: Job, summary: RunSummary): void;
  /** Counts an adopted eval process among the running jobs. */
  adopt(job: Job): void;
}

export async function recoverRuns(opts: RecoverRunsOptions): Promise<void> {
  const { ctx } = opts;
  const scan = await scanUnfinishedRuns(opts.outputsDir);
  for (const run of scan.finishedWithoutDone) {
    await touchDone(run.runDir).catch(() => {
      ctx.unrecorded.set(run.runId, { runDir: run.runDir, summary: run.summary!, summaryOnDisk: true });
    });
    ctx.catalog.upsertRun(catalogRunFromSummary(run.summary!, { viaSubprocess: run.spec!.viaSubprocess !== false }));
  }
  for (const run of scan.unreadable) {
    // A run whose spec.json is not a valid spec cannot go on; its summary says why.
    if (run.summary && !run.process && run.specError instanceof SpecInvalidError) {
      await finishUnstartable(run, 'FAILED', { code: run.specError.code, message: run.specError.message }, ctx);
      continue;
    }
    ctx.log.warn(`run ${run.runId}: no readable spec.json/summary.json; left as it is`);
  }
  for (const run of scan.running) await recoverRunning(run, opts);
  for (const run of scan.queued) await recoverQueued(run, opts);
  if (scan.queued.length + scan.running.length > 0) {
    ctx.log.info(`recovered ${scan.queued.length} queued run(s) and ${scan.running.length} run(s) recorded as running`);
  }
}

async function recoverQueued(run: UnfinishedRun, opts: RecoverRunsOptions): Promise<void> {
  const { ctx } = opts;
  const spec = run.spec!;
  let estimate: ResourceEstimate;
  let shared: string[];
  try {
    const graph = await inspectSpecGraph(spec, opts, opts.policy);
    shared = graph.shared;
    estimate = estimateRun({
      workerCount: effectiveWorkerCount(spec),
      nodesets: nodesetCosts(graph.nodesets),
      calibratedPeakMb: ctx.catalog.calibratedPeak(spec.graphName, effectiveWorkerCount(spec)),
      calibratedVramPeakMb: ctx.catalog.calibratedVramPeak(spec.graphName, effectiveWorkerCount(spec)),
      calibratedCores: ctx.catalog.calibratedCores(spec.graphName, effectiveWorkerCount(spec)),
      ...(spec.marginalVramMb !== undefined ? { marginalVramMb: spec.marginalVramMb } : {}),
    });
    // The hosts of the previous backend are gone: new ones, new URLs.
    await writeSharedUrls(run.runDir, await acquireSharedHosts(ctx, shared, run.runId));
    let summary = run.summary!;
    if (summary.status !== 'QUEUED') {
      summary = { ...summary, seq: summary.seq + 1, status: 'QUEUED', startedAt: null };
      await writeSummary(run.runDir, summary);
      ctx.log.info(`run ${run.runId}: its eval process was never started; queued again`);
    }
    opts.enqueue(opts.newJob(spec, run.runDir, estimate, shared), summary);
  } catch (err) {
    const storage = storageCodeOf(err, run.runDir);
    await finishUnstartable(
      run,
      'FAILED',
      storage
        ? { code: storage, message: `could not be re-queued after a restart: ${describeStorage(storage, run.runDir)}` }
        : {
            code: err instanceof RunPolicyError ? err.code : 'GRAPH_INVALID',
            message: `could not be re-queued after a restart: ${errorMessage(err)}`,
          },
      ctx,
    );
  }
}

/** The run's graph as its spec froze it (or, for older specs, as the catalog has it now). */
function inspectSpecGraph(spec: RunSpec, opts: RecoverRunsOptions, policy?: RunPolicy) {
  return inspectRunGraph({
    graphName: spec.graphName,
    overrides: spec.overrides,
    frozen: spec.graph,
    ...opts.graphDirs,
    workspaceDir: spec.activeWorkspaceDir ?? opts.graphDirs.workspaceDir,
    policy,
  });
}

async function recoverRunning(run: UnfinishedRun, opts: RecoverRunsOptions): Promise<void> {
  const { ctx } = opts;
  const spec = run.spec!;
  const pid = run.process?.pid ?? run.summary?.pid ?? null;
  if (spec.viaSubprocess !== false && pid !== null && (await isEvalProcessOf(pid, run.runDir, ctx.evalProcessMain))) {
    const graph = await inspectSpecGraph(spec, opts).catch(() => null);
    const estimate = estimateRun({
      workerCount: effectiveWorkerCount(spec),
      nodesets: nodesetCosts(graph?.nodesets ?? []),
      calibratedPeakMb: ctx.catalog.calibratedPeak(spec.graphName, effectiveWorkerCount(spec)),
      calibratedVramPeakMb: ctx.catalog.calibratedVramPeak(spec.graphName, effectiveWorkerCount(spec)),
      calibratedCores: ctx.catalog.calibratedCores(spec.graphName, effectiveWorkerCount(spec)),
      ...(spec.marginalVramMb !== undefined ? { marginalVramMb: spec.marginalVramMb } : {}),
    });
    const job = opts.newJob(spec, run.runDir, estimate, []);
    job.state = 'running';
    job.adopted = true;
    job.pid = pid;
    job.startedAt = run.summary?.startedAt ?? run.process?.startedAt ?? null;
    job.episodesDone = run.summary?.episodesDone ?? 0;
    opts.adopt(job);
    ctx.catalog.upsertRun(catalogRunFromSummary(run.summary!, { viaSubprocess: true, pid }));
    ctx.log.info(`run ${run.runId}: its eval process (pid ${pid}) is still running; adopted and watched until it exits`);
    return;
  }
  const why =
    spec.viaSubprocess === false
      ? 'it ran inside the backend, which stopped'
      : pid === null
        ? 'the backend stopped before its eval process started'
        : `the backend restarted and its eval process (pid ${pid}) is gone`;
  // An eval process that died of a storage fault said so in its exit code or its last log line.
  const exitCode = storageCodeOfExit(run.process?.exitCode ?? null);
  const { code: storage, lastStderr: last } =
    pid === null ? { code: exitCode, lastStderr: null } : await exitStorageFault(join(run.runDir, FILES.stderr), exitCode);
  if (storage) {
    const message = `${describeStorage(storage, run.runDir)}; its eval process (pid ${pid}) is gone${last ? ` (last stderr line: ${last})` : ''}`;
    await finishUnstartable(run, 'FAILED', { code: storage, message }, ctx);
    return;
  }
  await finishUnstartable(run, 'ABORTED', { code: 'ABORTED', message: why }, ctx);
}

/** Writes a terminal summary (keeping finished episodes) and _DONE for a run that cannot go on. */
async function finishUnstartable(
  run: UnfinishedRun,
  status: 'ABORTED' | 'FAILED',
  error: { code: string; message: string },
  ctx: JobContext,
): Promise<void> {
  const unrestored = run.summary ?? queuedSummary(run.spec!);
  // A retry that cannot go on: its episodes' earlier records come back (not where the disk refuses).
  const base = (await restoreUnplayed(run.runDir, unrestored).catch(() => null)) ?? unrestored;
  let summary: RunSummary = { ...base, seq: base.seq + 1, status, error, finishedAt: new Date().toISOString() };
  delete summary.pid;
  let summaryOnDisk = false;
  try {
    await writeSummary(run.runDir, summary);
    summaryOnDisk = true;
    await touchDone(run.runDir);
  } catch (err) {
    // The disk still refuses: say so (that is why the run could not be finished), keep it in memory, retry each tick.
    const storage = storageCodeOf(err, run.runDir);
    if (storage && !summaryOnDisk && error.code !== storage) {
      summary = {
        ...summary,
        status: 'FAILED',
        error: { code: storage, message: `${describeStorage(storage, run.runDir)}; ${error.message}` },
      };
    }
    ctx.unrecorded.set(run.runId, { runDir: run.runDir, summary, summaryOnDisk });
  }
  ctx.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: run.spec?.viaSubprocess !== false }));
  ctx.log.warn(`run ${run.runId} marked ${status.toLowerCase()}: ${error.message}`);
}
