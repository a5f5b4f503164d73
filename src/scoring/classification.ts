/**
 * Run-level classification metrics for label targets: accuracy, per-class precision / recall /
 * F1, macro F1 and the confusion matrix (rows: true label, columns: predicted label). Folded in
 * the order given (callers pass episode-index order), so the result never depends on workers.
 */
import type { ScoreEntry } from '../core/score-entry.js';
import { normalizeAnswer } from './normalize.js';

/** The predicted-label column for answers that name no class of the targets (or none at all). */
export const OTHER_LABEL = '(other)';

/** Targets look like labels when at most this many distinct ones occur… */
const MAX_LABELS = 20;

export interface ClassStats {
  label: string;
  precision: number;
  recall: number;
  f1: number;
  /** Episodes whose true label this is. */
  support: number;
}

export interface ClassificationReport {
  /** Episodes counted. */
  count: number;
  accuracy: number;
  macroF1: number;
  /** One per true label, labels sorted. */
  perClass: ClassStats[];
  confusion: {
    /** Row labels: the true labels, sorted. */
    labels: string[];
    /** Column labels: the true labels, then OTHER_LABEL when some prediction is none of them. */
    predicted: string[];
    /** matrix[row][column] = episodes. */
    matrix: number[][];
  };
}

const labelOf = (v: unknown): string | undefined =>
  typeof v === 'string' ? normalizeAnswer(v) : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;

/**
 * Whether the targets of these entries are labels: every target a single string or number, at
 * least 2 distinct and at most MAX_LABELS distinct, and each label shared by 2 episodes on average.
 */
export function looksLikeLabels(entries: readonly ScoreEntry[]): boolean {
  const labels = new Set<string>();
  for (const e of entries) {
    const l = labelOf(e.target);
    if (l === undefined) return false;
    labels.add(l);
  }
  return labels.size >= 2 && labels.size <= MAX_LABELS && labels.size * 2 <= entries.length;
}

/** An entry's predicted label: the true one when it scored 1, else what the scorer extracted. */
function predictedOf(e: ScoreEntry, truth: string): string {
  if (e.value === 1) return truth;
  return e.extracted === null ? OTHER_LABEL : normalizeAnswer(e.extracted);
}

const ratio = (a: number, b: number): number => (b === 0 ? 0 : a / b);

export function classify(entries: readonly ScoreEntry[]): ClassificationReport {
  const rows: Array<{ truth: string; predicted: string }> = [];
  for (const e of entries) {
    const truth = labelOf(e.target);
    if (truth !== undefined) rows.push({ truth, predicted: predictedOf(e, truth) });
  }
  const labels = [...new Set(rows.map((r) => r.truth))].sort();
  const index = new Map(labels.map((l, i) => [l, i]));
  const hasOther = rows.some((r) => !index.has(r.predicted));
  const predicted = hasOther ? [...labels, OTHER_LABEL] : [...labels];
  const matrix = labels.map(() => predicted.map(() => 0));
  for (const r of rows) matrix[index.get(r.truth)!]![index.get(r.predicted) ?? labels.length]! += 1;
  const perClass = labels.map((label, i): ClassStats => {
    const tp = matrix[i]![i]!;
    const support = matrix[i]!.reduce((a, b) => a + b, 0);
    const predictedAs = matrix.reduce((a, row) => a + row[i]!, 0);
    const precision = ratio(tp, predictedAs);
    const recall = ratio(tp, support);
    return { label, precision, recall, f1: ratio(2 * precision * recall, precision + recall), support };
  });
  const correct = labels.reduce((a, _l, i) => a + matrix[i]![i]!, 0);
  return {
    count: rows.length,
    accuracy: ratio(correct, rows.length),
    macroF1: ratio(
      perClass.reduce((a, c) => a + c.f1, 0),
      perClass.length,
    ),
    perClass,
    confusion: { labels, predicted, matrix },
  };
}
