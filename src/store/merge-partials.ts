/**
 * mergePartials: the one function that joins the partials of a run spread over machines
 * (`evalctl run --shard k/K` directories) into one run. Records are folded in episode-index
 * order and the aggregates recomputed from them exactly as a one-machine run computes them
 * (store/aggregate.ts), so the merged summary equals the one-machine summary byte for byte,
 * timing and worker fields aside. Partials of different specs, overlapping partials and
 * partials that leave episodes out are refused, each with its own code, naming what differs
 * or which indices.
 */
import { createHash } from 'node:crypto';
import { CodedError } from '../errors.js';
import { playCountOf, repeatsOf } from '../spec/repeats.js';
import { describeIndices, shardSizeOf } from '../spec/shards.js';
import { computeAggregates } from './aggregate.js';
import { infraFailureOf } from './infra-failure.js';
import type { RunManifest } from './run-manifest.js';
import type { EpisodeRecord, RunSpec, RunSummary } from './types.js';

/** One partial as read from its run directory. */
export interface PartialRun {
  /** Where it came from, for error messages (its directory). */
  source: string;
  spec: RunSpec;
  summary: RunSummary;
}

export interface MergedRun {
  spec: RunSpec;
  summary: RunSummary;
  /** Each record's partial (its `source`), by episode index. */
  sourceOf: Map<number, string>;
}

/** A merge refused: MERGE_MISMATCH, MERGE_OVERLAP or MERGE_GAP. */
export class MergeError extends CodedError {
  constructor(code: 'MERGE_MISMATCH' | 'MERGE_OVERLAP' | 'MERGE_GAP', message: string) {
    super(code, message);
  }
}

/** JSON with object keys sorted, so equal graphs hash equal whatever order their keys were written in. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** sha256 of the frozen graph (overrides applied), the identity of what was evaluated. */
export const graphHashOf = (spec: Pick<RunSpec, 'graph'>): string =>
  createHash('sha256')
    .update(canonicalJson(spec.graph ?? null))
    .digest('hex')
    .slice(0, 16);

/** The spec fields a result depends on: partials must agree on every one. workerCount, priority and timing dials may differ. */
const IDENTITY: Record<string, (s: RunSpec) => unknown> = {
  graph: graphHashOf,
  graphName: (s) => s.graphName,
  seed: (s) => s.seed,
  episodeCount: (s) => s.episodeCount,
  repeats: repeatsOf,
  shardSize: shardSizeOf,
  episodeOffset: (s) => s.episodeOffset,
  dataset: (s) => s.dataset ?? null,
  split: (s) => s.split ?? null,
  stepBudget: (s) => s.stepBudget ?? null,
  perStepTimeoutSec: (s) => s.perStepTimeoutSec,
  perCallTimeoutSec: (s) => s.perCallTimeoutSec ?? null,
};

/** What in a run's manifest says what it was made from (the graph, each nodeset's code, the dataset's files); the project and runtime may differ between machines. */
const madeFrom = (m: RunManifest): string => canonicalJson({ graph: m.graphSha256, nodesets: m.nodesets, dataset: m.dataset ?? null });

/**
 * The merged run's manifest.json: the first partial's when every partial has one and all were
 * made from the same graph, nodeset code and dataset files; none when a partial has none (a run
 * recorded before manifests). MERGE_MISMATCH when two say they were made from different code or
 * data: their records could not be one run's.
 */
export function mergedManifest(partials: ReadonlyArray<{ source: string; manifest: RunManifest | null }>): RunManifest | null {
  const first = partials[0];
  if (!first?.manifest || partials.some((p) => !p.manifest)) return null;
  const made = madeFrom(first.manifest);
  const differ = partials.filter((p) => madeFrom(p.manifest!) !== made).map((p) => p.source);
  if (differ.length > 0)
    throw new MergeError(
      'MERGE_MISMATCH',
      `the partials were made from different nodeset code or dataset files (manifest.json): ${differ.join(', ')} ≠ ${first.source}`,
    );
  return first.manifest;
}

/** Merges partials (any order) into one run with `runId`; throws MergeError when they do not make exactly one run. */
export function mergePartials(partials: readonly PartialRun[], added: { runId: string }): MergedRun {
  const first = partials[0];
  if (!first) throw new MergeError('MERGE_GAP', 'nothing to merge: give the partial run directories');

  const differences: string[] = [];
  for (const p of partials.slice(1)) {
    for (const [field, get] of Object.entries(IDENTITY)) {
      const a = get(first.spec);
      const b = get(p.spec);
      if (a !== b) differences.push(`${field} ${JSON.stringify(b)} in ${p.source} ≠ ${JSON.stringify(a)} in ${first.source}`);
    }
  }
  if (differences.length > 0) {
    throw new MergeError('MERGE_MISMATCH', `the partials are not of one run: ${differences.join('; ')}`);
  }

  const unfinished = partials.filter((p) => p.summary.status !== 'COMPLETED');
  if (unfinished.length > 0) {
    throw new MergeError(
      'MERGE_GAP',
      `partials that did not complete leave episodes out: ${unfinished.map((p) => `${p.source} is ${p.summary.status}`).join('; ')}`,
    );
  }

  const byIndex = new Map<number, EpisodeRecord>();
  const sourceOf = new Map<number, string>();
  const overlaps = new Map<string, number[]>();
  for (const p of partials) {
    for (const r of p.summary.episodes) {
      const other = sourceOf.get(r.index);
      if (other !== undefined) {
        const key = `${other} and ${p.source}`;
        overlaps.set(key, [...(overlaps.get(key) ?? []), r.index]);
        continue;
      }
      byIndex.set(r.index, r);
      sourceOf.set(r.index, p.source);
    }
  }
  if (overlaps.size > 0) {
    const parts = [...overlaps].map(([where, idx]) => `episodes ${describeIndices(idx)} are in both ${where}`);
    throw new MergeError('MERGE_OVERLAP', `the partials overlap: ${parts.join('; ')}`);
  }

  // Run indices are plays (episodes × repeats); the summary counts them too.
  const episodeCount = playCountOf(first.spec);
  const missing: number[] = [];
  for (let i = 0; i < episodeCount; i++) if (!byIndex.has(i)) missing.push(i);
  const outside = [...byIndex.keys()].filter((i) => i < 0 || i >= episodeCount);
  if (outside.length > 0) {
    throw new MergeError('MERGE_MISMATCH', `episodes ${describeIndices(outside)} lie outside the run's 0..${episodeCount - 1}`);
  }
  if (missing.length > 0) {
    throw new MergeError(
      'MERGE_GAP',
      `episodes ${describeIndices(missing)} of 0..${episodeCount - 1} are in no partial: run the missing shard task(s) and merge again`,
    );
  }

  const { shard: _shard, ...rest } = first.spec;
  const createdAt = partials.map((p) => p.spec.createdAt).sort()[0]!;
  const spec: RunSpec = { ...rest, runId: added.runId, createdAt };
  const records = [...byIndex.values()].sort((a, b) => a.index - b.index);
  const times = (pick: (s: RunSummary) => string | null) =>
    partials
      .map((p) => pick(p.summary))
      .filter((t): t is string => t !== null)
      .sort();
  const started = times((s) => s.startedAt);
  const finished = times((s) => s.finishedAt);
  const aggregates = computeAggregates(records, spec.metricRanges);
  // Each partial completed; the joined run is judged on all its plays, as a whole run is.
  const infra = infraFailureOf(records, spec.maxInfraErrorRate);
  // The key order of a summary the eval process writes (initialSummary), so equal runs serialise to equal bytes.
  const summary: RunSummary = {
    seq: 1,
    runId: added.runId,
    status: infra ? 'FAILED' : 'COMPLETED',
    graphName: spec.graphName,
    episodeCount,
    ...(repeatsOf(spec) > 1 ? { repeats: repeatsOf(spec) } : {}),
    workerCount: spec.workerCount,
    seed: spec.seed,
    priority: spec.priority,
    episodesDone: records.length,
    createdAt,
    startedAt: started[0] ?? null,
    finishedAt: finished[finished.length - 1] ?? null,
    error: infra,
    ...(spec.metricRanges ? { metricRanges: spec.metricRanges } : {}),
    aggregateMetrics: aggregates.aggregateMetrics,
    aggregateByTask: aggregates.aggregateByTask,
    statusCounts: aggregates.statusCounts,
    timedOut: aggregates.timedOut,
    episodes: records,
  };
  return { spec, summary, sourceOf };
}
