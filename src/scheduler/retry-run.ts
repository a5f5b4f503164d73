/**
 * Queueing a retry of a finished run (docs/retry.md): the graph frozen in its spec (or its
 * graph.json) is checked and estimated like a recovered run's, the backend's shared hosts are
 * taken, then the run directory becomes a queued new attempt (store/attempts.ts). The retry
 * then waits for admission like any run.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CodedError, errorMessage } from '../errors.js';
import { parseGraph } from '../graph/graph.js';
import type { GraphSpec } from '../core/types.js';
import { effectiveWorkerCount } from '../spec/effective-workers.js';
import { prepareRetry, type PreparedRetry } from '../store/attempts.js';
import { readJson } from '../store/atomic.js';
import { FILES, readSpec, touchDone, writeSharedUrls, writeSummary } from '../store/run-dir.js';
import type { EpisodeStatus } from '../statuses.js';
import type { RunSpec } from '../store/types.js';
import { estimateRun, nodesetCosts } from './admission/estimate.js';
import type { JobContext } from './job/job.js';
import { acquireSharedHosts } from './job/remote-job.js';
import { inspectRunGraph, type GraphDirs } from './run-graph.js';
import type { RunPolicy } from '../spec/run-policy.js';
import { assertRetryModels } from './retry-models.js';
import type { ResourceEstimate } from './types.js';

export interface QueueRetryOptions {
  runDir: string;
  endings: readonly EpisodeStatus[];
  graphDirs: GraphDirs;
  ctx: JobContext;
  /** The operator's rules, checked again: a retry runs the run's tools again, under this server's switch. */
  policy?: RunPolicy | undefined;
}

export interface QueuedRetry extends PreparedRetry {
  estimate: ResourceEstimate;
  shared: string[];
}

/** The graph the run was frozen with: the spec's, else graph.json (specs written before graphs were frozen at submit). */
async function frozenGraphOf(runDir: string, spec: RunSpec): Promise<GraphSpec | undefined> {
  if (spec.graph) return spec.graph;
  const path = join(runDir, FILES.graph);
  return existsSync(path) ? parseGraph(await readJson<unknown>(path), path) : undefined;
}

/** Prepares the run directory for the next attempt; the caller queues the job. Nothing is changed when it throws before the move. */
export async function queueRetry(opts: QueueRetryOptions): Promise<QueuedRetry> {
  const { runDir, ctx } = opts;
  const spec = await readSpec(runDir);
  const graph = await inspectRunGraph({
    graphName: spec.graphName,
    overrides: spec.overrides,
    frozen: await frozenGraphOf(runDir, spec),
    ...opts.graphDirs,
    workspaceDir: spec.activeWorkspaceDir ?? opts.graphDirs.workspaceDir,
    policy: opts.policy,
  });
  await assertRetryModels(runDir, spec, graph);
  const workers = effectiveWorkerCount(spec);
  const estimate = estimateRun({
    workerCount: workers,
    nodesets: nodesetCosts(graph.nodesets),
    calibratedPeakMb: ctx.catalog.calibratedPeak(spec.graphName, workers),
    calibratedVramPeakMb: ctx.catalog.calibratedVramPeak(spec.graphName, workers),
    calibratedCores: ctx.catalog.calibratedCores(spec.graphName, workers),
    ...(spec.marginalVramMb !== undefined ? { marginalVramMb: spec.marginalVramMb } : {}),
  });
  const prepared = await prepareRetry(runDir, opts.endings);
  let urls: Record<string, string>;
  try {
    urls = await acquireSharedHosts(ctx, graph.shared, spec.runId);
  } catch (err) {
    // The attempt cannot start: the run ends FAILED (its kept records intact), to be retried again.
    const failed = {
      ...prepared.summary,
      seq: prepared.summary.seq + 1,
      status: 'FAILED' as const,
      finishedAt: new Date().toISOString(),
      error: { code: 'HOST_ERROR', message: `the retry could not start the shared hosts: ${errorMessage(err)}` },
    };
    await writeSummary(runDir, failed)
      .then(() => touchDone(runDir))
      .catch(() => {});
    throw new CodedError('HOST_ERROR', `could not start the shared hosts of graph "${spec.graphName}": ${errorMessage(err)}`, {
      cause: err,
    });
  }
  await writeSharedUrls(runDir, urls);
  return { ...prepared, estimate, shared: graph.shared };
}
