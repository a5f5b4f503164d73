/**
 * A run's score index (`score-index.json`): the score table a comparison reads (per episode its
 * id, index, cluster, whether it counts, and each metric's mean over its counted plays), in
 * columns. A finished 10,000-episode run's summary.json is megabytes of records (timings,
 * assets, logs) that a comparison never reads; parsing it is most of a cold comparison. The
 * index is about a tenth of its size and is read straight into columns. It is written when a
 * run ends and, for older runs, the first time one is compared. It belongs to one
 * summary.json: it records that file's mtime and size and is ignored once they differ (a
 * rescore, a retry, a finalised failure rewrite it), so it never answers for other records.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic.js';
import { FILES } from '../store/run-dir.js';
import type { RunSummary } from '../store/types.js';
import type { MetricRanges } from '../core/types.js';
import { columnsOf, parseMetricRanges, scoreTable, tableOfColumns, type ScoreColumns, type ScoreTable } from './episode-scores.js';

export const SCORE_INDEX_FILE = 'score-index.json';
/** Bumped whenever the layout or what a score means changes: an index of another format is ignored. */
export const SCORE_INDEX_FORMAT = 'batch-eval/score-index@1';

/** What an index says of its run besides the scores. */
export interface IndexedRun {
  runId: string;
  graphName: string;
  status: string;
}

/** An index's run with its scores. */
export interface IndexedScores extends IndexedRun {
  scores: ScoreTable;
}

/** The summary.json an index was built from. */
export interface SummaryStamp {
  mtimeMs: number;
  size: number;
}

interface ScoreIndexFile {
  format: string;
  runId: string;
  graphName: string;
  /** The run's status in that summary.json. */
  status: string;
  summary: SummaryStamp;
  metrics: string[];
  /** One entry per episode, in the table's order (first appearance by index). */
  episodeIds: string[];
  indexes: number[];
  /** 1 when at least one play ended in a counted ending. */
  counted: number[];
  /** Absent when no episode carries a cluster; else null where one does not. */
  clusters?: (string | null)[];
  /** metric → per episode its mean, null where the episode has none. */
  values: Record<string, (number | null)[]>;
  /** The run's declared metric ranges, when it has them. */
  metricRanges?: MetricRanges;
}

export async function summaryStamp(runDir: string): Promise<SummaryStamp | null> {
  const st = await stat(join(runDir, FILES.summary)).catch(() => null);
  return st ? { mtimeMs: st.mtimeMs, size: st.size } : null;
}

/** The index of a table, or null when a value would not survive JSON (an overflowed mean). */
export function scoreIndexOf(run: IndexedRun, table: ScoreTable, summary: SummaryStamp): ScoreIndexFile | null {
  const c = columnsOf(table);
  const values: Record<string, (number | null)[]> = {};
  for (const m of table.metrics) {
    const column = c.values.get(m)!;
    for (const v of column) if (v !== null && !Number.isFinite(v)) return null;
    values[m] = [...column];
  }
  return {
    format: SCORE_INDEX_FORMAT,
    runId: run.runId,
    graphName: run.graphName,
    status: run.status,
    summary: { mtimeMs: summary.mtimeMs, size: summary.size },
    metrics: table.metrics,
    episodeIds: [...c.ids],
    indexes: [...c.indexes],
    counted: [...c.counted],
    ...(c.clusters ? { clusters: [...c.clusters] } : {}),
    values,
    ...(table.metricRanges ? { metricRanges: { ...table.metricRanges } } : {}),
  };
}

/** Writes the index of `table` for the summary.json stamped `summary`; false when it has none to write. */
export async function writeScoreIndex(runDir: string, run: IndexedRun, table: ScoreTable, summary: SummaryStamp): Promise<boolean> {
  const index = scoreIndexOf(run, table, summary);
  if (!index) return false;
  // Compact on purpose: it is read by machines, and its size is what it saves.
  await writeFileAtomic(join(runDir, SCORE_INDEX_FILE), JSON.stringify(index));
  return true;
}

/**
 * At a run's end: the index of the final summary, stamped with summary.json as it is on disk
 * now. Nothing is written when summary.json is missing or is no longer `final` (a concurrent
 * rewrite): the first comparison then builds it.
 */
export async function writeScoreIndexOfSummary(runDir: string, final: RunSummary): Promise<boolean> {
  const before = await summaryStamp(runDir);
  if (!before) return false;
  const table = scoreTable(final.episodes, final.metricRanges);
  const after = await summaryStamp(runDir);
  if (!after || after.mtimeMs !== before.mtimeMs || after.size !== before.size) return false;
  return writeScoreIndex(runDir, final, table, before);
}

// Plain loops, not every(): this runs once per cold comparison, before the JIT has warmed up.
function isStringArray(v: unknown, n: number): v is string[] {
  if (!Array.isArray(v) || v.length !== n) return false;
  for (let i = 0; i < n; i++) if (typeof v[i] !== 'string') return false;
  return true;
}
function isIntegerColumn(v: unknown, n: number): v is number[] {
  if (!Array.isArray(v) || v.length !== n) return false;
  for (let i = 0; i < n; i++) if (!Number.isInteger(v[i])) return false;
  return true;
}
function isValueColumn(v: unknown, n: number): v is (number | null)[] {
  if (!Array.isArray(v) || v.length !== n) return false;
  for (let i = 0; i < n; i++) {
    const x = v[i];
    if (x !== null && !(typeof x === 'number' && Number.isFinite(x))) return false;
  }
  return true;
}
function isClusterColumn(v: unknown, n: number): v is (string | null)[] {
  if (!Array.isArray(v) || v.length !== n) return false;
  for (let i = 0; i < n; i++) if (v[i] !== null && typeof v[i] !== 'string') return false;
  return true;
}

/** The table an index file holds when it is one of this format for `runId`; null otherwise. */
export function scoreTableOfIndex(json: unknown, runId: string, summary: SummaryStamp): IndexedScores | null {
  if (json === null || typeof json !== 'object') return null;
  const f = json as Partial<ScoreIndexFile>;
  if (f.format !== SCORE_INDEX_FORMAT || f.runId !== runId || typeof f.graphName !== 'string' || typeof f.status !== 'string') return null;
  if (f.summary?.mtimeMs !== summary.mtimeMs || f.summary?.size !== summary.size) return null;
  const ids = f.episodeIds;
  if (!Array.isArray(ids)) return null;
  const n = ids.length;
  const { indexes, counted, clusters, metrics } = f;
  if (!isStringArray(ids, n) || !isIntegerColumn(indexes, n) || !isIntegerColumn(counted, n)) return null;
  if (clusters !== undefined && !isClusterColumn(clusters, n)) return null;
  if (!Array.isArray(metrics) || !isStringArray(metrics, metrics.length) || f.values === null || typeof f.values !== 'object') return null;
  const values = new Map<string, (number | null)[]>();
  for (const m of metrics) {
    const column = (f.values as Record<string, unknown>)[m];
    if (!isValueColumn(column, n)) return null;
    values.set(m, column);
  }
  if (new Set(ids).size !== n) return null;
  const columns: ScoreColumns = { ids, indexes, counted, ...(clusters ? { clusters } : {}), values };
  const ranges = parseMetricRanges(f.metricRanges);
  if (f.metricRanges !== undefined && !ranges) return null;
  return { runId, graphName: f.graphName, status: f.status, scores: tableOfColumns(metrics, columns, ranges) };
}

/** The table of `runDir`'s index when there is one for its summary.json as `summary` stamps it; else null. */
export async function readScoreIndex(runDir: string, runId: string, summary: SummaryStamp): Promise<IndexedScores | null> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(join(runDir, SCORE_INDEX_FILE), 'utf8'));
  } catch {
    return null;
  }
  return scoreTableOfIndex(json, runId, summary);
}
