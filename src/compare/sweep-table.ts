/**
 * The table of a sweep: one row per config with each metric's aggregate over the config's
 * episodes (its seed runs pooled: an episode's value is the mean over its seeds) and the paired
 * difference against the baseline config (the grid's first point), BH-flagged over the table.
 */
import type { MetricRanges } from '../core/types.js';
import { summarizeValues, withImputed } from '../store/aggregate.js';
import { isImputed, playValue } from '../store/counted-endings.js';
import type { EpisodeRecord, MetricAggregate } from '../store/types.js';
import { compareRuns, type MetricComparison } from './compare-runs.js';
import { scoreTable, type ScoreTable } from './episode-scores.js';

export interface SweepRowInput {
  /** Names the config in the comparison (its index as a string is enough). */
  key: string;
  /** The finished episodes of all its runs. */
  records: readonly EpisodeRecord[];
  /** Its runs' declared metric ranges (one graph, so one set), when they have them. */
  metricRanges?: MetricRanges | undefined;
}

export interface SweepRow {
  key: string;
  aggregates: MetricAggregate[];
  /** metric → difference against the baseline config; empty for the baseline and for a config with no shared episode yet. */
  vsBaseline: Map<string, MetricComparison>;
}

/** Aggregates of a score table (one value per episode), `excluded` from the records' endings. */
function aggregatesOf(scores: ScoreTable, records: readonly EpisodeRecord[], metrics: readonly string[]): MetricAggregate[] {
  const ranges = scores.metricRanges;
  return metrics.map((name) => {
    const values: number[] = [];
    const clusters: (string | undefined)[] = [];
    for (const e of scores.episodes.values()) {
      const v = e.values.get(name);
      if (v === undefined) continue;
      values.push(v);
      clusters.push(e.cluster);
    }
    const excluded: Record<string, number> = {};
    const imputed: Record<string, number> = {};
    const declared = ranges?.[name];
    for (const r of records) {
      const into = playValue(r, name, declared) === undefined ? excluded : isImputed(r, name, declared) ? imputed : undefined;
      if (into) into[r.status] = (into[r.status] ?? 0) + 1;
    }
    return withImputed(
      summarizeValues(name, values, clusters.some((c) => c !== undefined) ? clusters : undefined, excluded, declared),
      imputed,
      declared,
    );
  });
}

export function sweepTable(rows: readonly SweepRowInput[], metrics?: readonly string[]): { metrics: string[]; rows: SweepRow[] } {
  const tables = rows.map((r) => ({ runId: r.key, scores: scoreTable(r.records, r.metricRanges) }));
  const names = metrics && metrics.length > 0 ? [...new Set(metrics)] : [...new Set(tables.flatMap((t) => t.scores.metrics))].sort();
  const out: SweepRow[] = rows.map((r, i) => ({
    key: r.key,
    aggregates: aggregatesOf(tables[i]!.scores, r.records, names),
    vsBaseline: new Map(),
  }));
  const [base, ...others] = tables;
  if (base && base.scores.episodes.size > 0) {
    const comparable = others.filter((t) => [...t.scores.episodes.keys()].some((id) => base.scores.episodes.has(id)));
    if (comparable.length > 0) {
      const cmp = compareRuns(base, comparable, names);
      for (const c of cmp.candidates) {
        const row = out.find((r) => r.key === c.candidateRunId)!;
        for (const m of c.metrics) row.vsBaseline.set(m.metric, m);
      }
    }
  }
  return { metrics: names, rows: out };
}
