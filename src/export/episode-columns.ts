/**
 * The columns of an episode export (CSV), fixed and documented in docs/export.md: the
 * episode's identity and ending, what a dataset episode was asked and answered (cut, see
 * sample-columns.ts), then its metrics sorted by name as `metric.<name>`, then the
 * timing and placement fields (the only ones that may differ between worker counts) last.
 */
import { orderMetrics } from '../compare/metric-order.js';
import type { MetricRanges } from '../core/types.js';
import type { EpisodeRecord } from '../store/types.js';
import { defuseFormula } from './defuse-formula.js';
import { SAMPLE_COLUMNS, type SampleColumn, sampleColumnsOf } from './sample-columns.js';

/** Columns before the metrics. */
export const LEADING_COLUMNS = [
  'index',
  'episodeId',
  'repeat',
  'status',
  'steps',
  'seed',
  'stepBudget',
  'task',
  'sampleId',
  'cluster',
  'scene',
  'instruction',
  ...SAMPLE_COLUMNS,
  'error',
  'droppedMetrics',
] as const;

/** Columns after the metrics: timing and placement. */
export const TRAILING_COLUMNS = ['workerId', 'durationMs', 'startedAt', 'finishedAt'] as const;

export const METRIC_PREFIX = 'metric.';

/**
 * A cell's text: numbers as JavaScript writes them (shortest exact form), booleans true/false,
 * absent or null empty, text defused against formulas, anything else as JSON.
 */
export function cellText(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return defuseFormula(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/**
 * The header: fixed columns around the metric names, in the run's listing order (the primary
 * metric first, then those with a goal, then the rest, by name: `declared` is the run's
 * metricRanges; compare/metric-order.ts). Metric names come from the user's
 * graph, so each cell is defused like any text cell; the `metric.` prefix already keeps a name
 * from starting a cell, and the header stays safe should a column ever be named otherwise.
 */
export function headerOf(metricNames: Iterable<string>, declared?: MetricRanges): { header: string[]; metrics: string[] } {
  const metrics = orderMetrics([...metricNames], declared);
  const header = [...LEADING_COLUMNS, ...metrics.map((m) => METRIC_PREFIX + m), ...TRAILING_COLUMNS].map(defuseFormula);
  return { header, metrics };
}

/**
 * The `droppedMetrics` cell: each metric a node reported as NaN or ±Infinity, `name=value`,
 * sorted by name and joined by `; `, so a spreadsheet tells such a metric from one never reported
 * (both leave the metric's own cell empty). Empty when there is none.
 */
export function droppedText(record: EpisodeRecord): string {
  const dropped = record.droppedMetrics ?? [];
  return dropped
    .map((d) => `${d.name}=${d.value}`)
    .sort()
    .join('; ');
}

/** One record's cells in header order. */
export function rowOf(record: EpisodeRecord & Record<string, unknown>, metrics: readonly string[]): string[] {
  const sample = sampleColumnsOf(record);
  const isSample = (c: string): c is SampleColumn => (SAMPLE_COLUMNS as readonly string[]).includes(c);
  return [
    ...LEADING_COLUMNS.map((c) => cellText(c === 'droppedMetrics' ? droppedText(record) : isSample(c) ? sample[c] : record[c])),
    ...metrics.map((m) => cellText(record.metrics[m])),
    ...TRAILING_COLUMNS.map((c) => cellText(record[c])),
  ];
}
