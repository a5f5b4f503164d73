/**
 * What a `Run` resolves from: a catalog row (cheap, for lists) or a summary (the run dir's
 * truth), with the full summary and the spec loaded from the run dir only when a field needs them.
 */
import { NotFoundError } from '../errors.js';
import { computeAggregates } from '../store/aggregate.js';
import { catalogRunFromSummary, type CatalogRun } from '../store/catalog.js';
import { assertRunId } from '../store/run-dir.js';
import type { RunSpec, RunSummary } from '../store/types.js';
import type { ApiContext } from './context.js';

export interface RunSource {
  row: CatalogRun;
  /** Set when the source came from a summary; otherwise loaded on demand. */
  summary?: RunSummary;
  /** True when `summary` is summary.json alone, its records in records.jsonl (read by page, or whole by loadSummary). */
  recordsInFile?: boolean;
  headPromise?: Promise<RunSummary | null>;
  /** The watcher's seq of this state, for a state runProgress delivered; else the run's newest. */
  seq?: number;
  summaryPromise?: Promise<RunSummary | null>;
  specPromise?: Promise<RunSpec | null>;
}

export function rowFromSummary(summary: RunSummary, catalogRow?: CatalogRun): CatalogRun {
  // Only a running run's pid is worth falling back to: a finished one has no process.
  // Lazy: a runProgress state computes its aggregates over the run when read, and a subscriber asking
  // for `seq status episodesDone` must not pay that at every episode boundary.
  return catalogRunFromSummary(
    summary,
    {
      viaSubprocess: catalogRow?.viaSubprocess,
      pid: summary.pid ?? (summary.status === 'RUNNING' ? (catalogRow?.pid ?? null) : null),
    },
    true,
  );
}

export function sourceFromSummary(summary: RunSummary, ctx: ApiContext, recordsInFile = false): RunSource {
  return { row: rowFromSummary(summary, ctx.catalog.getRun(summary.runId)), summary, ...(recordsInFile ? { recordsInFile } : {}) };
}

export const sourceFromRow = (row: CatalogRun): RunSource => ({ row });

/**
 * summary.json when it is a valid summary of the run; else the last good state the server's
 * watcher holds of it; else, for a run the catalog knows, its row with the episode records on
 * disk (so a summary.json caught corrupt never shows a run without the episodes it has); else null.
 */
export async function readSummaryOrLastGood(runId: string, ctx: ApiContext): Promise<RunSummary | null> {
  // A final state the disk refused is newer than summary.json.
  const good = ctx.scheduler.unrecordedSummary?.(runId) ?? (await ctx.runs.readSummary(runId)) ?? ctx.watcher.snapshot(runId);
  if (good) return good;
  const row = ctx.catalog.getRun(runId);
  if (!row) return null;
  const episodes = await ctx.runs.readEpisodeRecords(runId);
  const spec = await ctx.runs.readSpec(runId).catch(() => null);
  return {
    seq: 0,
    runId,
    status: row.status,
    graphName: row.graphName,
    episodeCount: row.episodeCount,
    workerCount: row.workerCount,
    seed: typeof spec?.seed === 'number' ? spec.seed : 0,
    priority: row.priority,
    episodesDone: episodes.length,
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    error: row.error,
    ...(spec?.metricRanges ? { metricRanges: spec.metricRanges } : {}),
    ...computeAggregates(episodes, spec?.metricRanges),
    episodes,
    ...(row.pid !== null && row.status === 'RUNNING' ? { pid: row.pid } : {}),
  };
}

/** The run's full summary (with episodes); null when no valid one can be had. */
export function loadSummary(src: RunSource, ctx: ApiContext): Promise<RunSummary | null> {
  if (src.summary && !src.recordsInFile) return Promise.resolve(src.summary);
  src.summaryPromise ??= readSummaryOrLastGood(src.row.id, ctx);
  return src.summaryPromise;
}

/** The run's state and aggregates, without reading its records; null when no valid summary can be had. */
export function loadHead(src: RunSource, ctx: ApiContext): Promise<RunSummary | null> {
  if (src.summary) return Promise.resolve(src.summary);
  src.headPromise ??= readHeadOrLastGood(src.row.id, ctx).then((h) => h?.summary ?? null);
  return src.headPromise;
}

/**
 * As readSummaryOrLastGood, but summary.json alone when it is valid (`recordsInFile`: its
 * records are in records.jsonl, not read here): what a run page and a list need.
 */
export async function readHeadOrLastGood(runId: string, ctx: ApiContext): Promise<{ summary: RunSummary; recordsInFile: boolean } | null> {
  const unrecorded = ctx.scheduler.unrecordedSummary?.(runId);
  if (unrecorded) return { summary: unrecorded, recordsInFile: false };
  const head = await ctx.runs.readSummaryHead(runId);
  if (head) return { summary: head, recordsInFile: head.episodes.length === 0 && head.episodesDone > 0 };
  const good = await readSummaryOrLastGood(runId, ctx);
  return good ? { summary: good, recordsInFile: false } : null;
}

export function loadSpec(src: RunSource, ctx: ApiContext): Promise<RunSpec | null> {
  src.specPromise ??= ctx.runs.readSpec(src.row.id);
  return src.specPromise;
}

/**
 * The run now: summary.json when readable (the truth), else the catalog's row. Throws
 * BAD_USER_INPUT for a malformed id and NOT_FOUND for a run that does not exist.
 */
export async function loadRun(runId: string, ctx: ApiContext): Promise<RunSource> {
  assertRunId(runId);
  const head = await readHeadOrLastGood(runId, ctx);
  if (head) return sourceFromSummary(head.summary, ctx, head.recordsInFile);
  const row = ctx.catalog.getRun(runId);
  if (row) return sourceFromRow(row);
  throw new NotFoundError(`run "${runId}"`);
}
