/**
 * A run's episodes as what they evaluate: records grouped by episodeId (the env episode, or a
 * dataset sample), each metric's value the mean over that episode's counted records (repeats,
 * or the seeds of one sweep config). Which endings count is the policy in counted-endings.ts.
 */
import type { MetricRanges } from '../core/types.js';
import { metricRangesSchema } from '../nodeset-registry/manifest.js';
import type { EpisodeRecord } from '../store/types.js';
import { isCountedEnding, missingValue, numericValue } from '../store/counted-endings.js';
import { meanOf } from '../stats/intervals.js';

export interface EpisodeScore {
  episodeId: string;
  /** The lowest episode index among its records (the one a link opens). */
  index: number;
  cluster?: string;
  /** metric → mean of its counted values. */
  values: Map<string, number>;
  /** True when at least one of its records ended in a counted ending. */
  counted: boolean;
}

export interface ScoreTable {
  /** By episodeId, in order of first appearance by index. */
  episodes: Map<string, EpisodeScore>;
  /** Metric names, sorted. */
  metrics: string[];
  /** The run's declared metric ranges (RunSummary.metricRanges), when it has them. */
  metricRanges?: MetricRanges;
}

/** `v` as declared metric ranges (a summary's or an index's `metricRanges`); undefined when it is not. */
export function parseMetricRanges(v: unknown): MetricRanges | undefined {
  if (v === undefined) return undefined;
  const r = metricRangesSchema.safeParse(v);
  return r.success ? r.data : undefined;
}

/**
 * The same table in columns, as a comparison reads it: row r is the r-th episode of
 * `episodes`. A score index is read straight into these (no map per episode), which is most
 * of what makes a cold comparison of 10,000-episode runs fast.
 */
export interface ScoreColumns {
  ids: readonly string[];
  indexes: readonly number[];
  /** 1 when the episode has a play in a counted ending, else 0. */
  counted: readonly number[];
  /** Absent when no episode carries a cluster; null for a row without one. */
  clusters?: readonly (string | null)[];
  /** Metric → per row its value, null where the episode has none. */
  values: ReadonlyMap<string, readonly (number | null)[]>;
}

const columnsOfTable = new WeakMap<ScoreTable, ScoreColumns>();

/** The columns of `table` (built once per table). */
export function columnsOf(table: ScoreTable): ScoreColumns {
  let c = columnsOfTable.get(table);
  if (c) return c;
  const eps = [...table.episodes.values()];
  const values = new Map<string, (number | null)[]>();
  for (const m of table.metrics)
    values.set(
      m,
      eps.map((e) => e.values.get(m) ?? null),
    );
  c = {
    ids: eps.map((e) => e.episodeId),
    indexes: eps.map((e) => e.index),
    counted: eps.map((e) => (e.counted ? 1 : 0)),
    ...(eps.some((e) => e.cluster !== undefined) ? { clusters: eps.map((e) => e.cluster ?? null) } : {}),
    values,
  };
  columnsOfTable.set(table, c);
  return c;
}

/** A table held in columns; its `episodes` map is built only when something reads it. */
export function tableOfColumns(metrics: string[], columns: ScoreColumns, metricRanges?: MetricRanges): ScoreTable {
  let episodes: Map<string, EpisodeScore> | undefined;
  const table: ScoreTable = {
    get episodes() {
      episodes ??= episodesOfColumns(metrics, columns);
      return episodes;
    },
    metrics,
    ...(metricRanges ? { metricRanges } : {}),
  };
  columnsOfTable.set(table, columns);
  return table;
}

function episodesOfColumns(metrics: readonly string[], c: ScoreColumns): Map<string, EpisodeScore> {
  const episodes = new Map<string, EpisodeScore>();
  const columns = metrics.map((m) => c.values.get(m)!);
  for (let i = 0; i < c.ids.length; i++) {
    const values = new Map<string, number>();
    for (let j = 0; j < metrics.length; j++) {
      const v = columns[j]![i];
      if (v !== null && v !== undefined) values.set(metrics[j]!, v);
    }
    const score: EpisodeScore = { episodeId: c.ids[i]!, index: c.indexes[i]!, values, counted: c.counted[i] === 1 };
    const cluster = c.clusters?.[i];
    if (cluster !== null && cluster !== undefined) score.cluster = cluster;
    episodes.set(score.episodeId, score);
  }
  return episodes;
}

export { numericValue };

/** The declared metrics a counted play that never produced them still scores, with that value. */
const imputableOf = (ranges: MetricRanges | undefined): [string, number][] =>
  Object.entries(ranges ?? {}).flatMap(([name, d]) => {
    const v = missingValue(d);
    return v === undefined ? [] : [[name, v] as [string, number]];
  });

/** Scores of one or more runs' records (several runs of one sweep config are pooled); `metricRanges` as the run declares them. */
export function scoreTable(records: readonly EpisodeRecord[], metricRanges?: MetricRanges): ScoreTable {
  const sorted = [...records].sort((a, b) => a.index - b.index);
  const episodes = new Map<string, EpisodeScore>();
  // Values are sums until the end; counts are kept only for episodes seen more than once (repeats, seeds).
  const counts = new Map<EpisodeScore, Map<string, number>>();
  const metrics = new Set<string>();
  const imputable = imputableOf(metricRanges);
  for (const r of sorted) {
    let score = episodes.get(r.episodeId);
    const seen = score !== undefined;
    if (!score) {
      score = {
        episodeId: r.episodeId,
        index: r.index,
        values: new Map(),
        counted: false,
        ...(r.cluster !== undefined ? { cluster: r.cluster } : {}),
      };
      episodes.set(r.episodeId, score);
    }
    if (!isCountedEnding(r.status)) continue;
    score.counted = true;
    let n = counts.get(score);
    if (seen && !n) {
      n = new Map([...score.values.keys()].map((k) => [k, 1]));
      counts.set(score, n);
    }
    const add = (name: string, v: number) => {
      metrics.add(name);
      score.values.set(name, (score.values.get(name) ?? 0) + v);
      if (n) n.set(name, (n.get(name) ?? 0) + 1);
    };
    for (const name in r.metrics) {
      const v = numericValue(r.metrics[name]);
      if (v !== undefined) add(name, v);
    }
    // The one rule of counted-endings.ts: a counted play without a declared metric scores its missing value.
    for (const [name, v] of imputable) if (numericValue(r.metrics[name]) === undefined) add(name, v);
  }
  const overflowed = new Set<EpisodeScore>();
  for (const [score, n] of counts)
    for (const [name, k] of n) {
      const mean = score.values.get(name)! / k;
      score.values.set(name, mean);
      if (!Number.isFinite(mean)) overflowed.add(score);
    }
  if (overflowed.size > 0) meansOfOverflowed(sorted, overflowed, metricRanges);
  return { episodes, metrics: [...metrics].sort(), ...(metricRanges ? { metricRanges } : {}) };
}

/**
 * Plays near the largest double whose plain sum overflowed (every value is finite, so their mean
 * is too): those means again, by meanOf over the episode's values in the same order (its scaled
 * fallback). Only these episodes are read twice; every other mean keeps the plain sum's bits.
 */
function meansOfOverflowed(
  sorted: readonly EpisodeRecord[],
  overflowed: ReadonlySet<EpisodeScore>,
  ranges: MetricRanges | undefined,
): void {
  const byId = new Map([...overflowed].map((s) => [s.episodeId, { score: s, values: new Map<string, number[]>() }]));
  const imputable = imputableOf(ranges);
  for (const r of sorted) {
    const e = byId.get(r.episodeId);
    if (!e || !isCountedEnding(r.status)) continue;
    const add = (name: string, v: number) => {
      const list = e.values.get(name);
      if (list) list.push(v);
      else e.values.set(name, [v]);
    };
    for (const name in r.metrics) {
      const v = numericValue(r.metrics[name]);
      if (v !== undefined) add(name, v);
    }
    for (const [name, v] of imputable) if (numericValue(r.metrics[name]) === undefined) add(name, v);
  }
  for (const { score, values } of byId.values())
    for (const [name, list] of values) if (!Number.isFinite(score.values.get(name)!)) score.values.set(name, meanOf(list));
}

const isRecordLike = (r: unknown): r is Pick<EpisodeRecord, 'index' | 'episodeId' | 'status' | 'metrics' | 'cluster'> => {
  if (r === null || typeof r !== 'object') return false;
  const o = r as Record<string, unknown>;
  return (
    Number.isInteger(o.index) &&
    typeof o.episodeId === 'string' &&
    typeof o.status === 'string' &&
    o.metrics !== null &&
    typeof o.metrics === 'object' &&
    !Array.isArray(o.metrics) &&
    (o.cluster === undefined || typeof o.cluster === 'string')
  );
};

/**
 * The scores of parsed summary.json, checking only the fields a comparison reads (a full
 * schema check of 10,000 records costs more than the comparison itself). Null when the file is
 * not plainly a summary of `runId` with such records: the caller then takes the checked path.
 */
export function scoreTableFromSummaryJson(json: unknown, runId: string): { graphName: string; scores: ScoreTable } | null {
  if (json === null || typeof json !== 'object') return null;
  const s = json as Record<string, unknown>;
  if (s.runId !== runId || typeof s.graphName !== 'string' || !Array.isArray(s.episodes)) return null;
  if (!s.episodes.every(isRecordLike)) return null;
  return { graphName: s.graphName, scores: scoreTable(s.episodes as EpisodeRecord[], parseMetricRanges(s.metricRanges)) };
}
