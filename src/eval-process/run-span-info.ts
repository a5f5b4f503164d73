/** What a run span says about its run, from its spec (the same for the server's span and the eval process's own). */
import { effectiveWorkerCount } from '../spec/effective-workers.js';
import { episodeIndicesOf } from '../spec/shards.js';
import type { RunSpec } from '../store/types.js';
import type { RunSpanInfo } from '../tracing/spans.js';

export function runSpanInfo(spec: RunSpec): RunSpanInfo {
  return {
    runId: spec.runId,
    graph: spec.graphName,
    episodes: episodeIndicesOf(spec).length,
    workers: effectiveWorkerCount(spec),
    seed: spec.seed,
  };
}
