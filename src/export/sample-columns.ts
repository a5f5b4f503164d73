/**
 * What a dataset episode was asked and answered, as flat text for the exports and the Python
 * DataFrame: `input` (the sample's input as the record keeps it: its last user message, cut at
 * 300 characters by env_dataset), `target`, `answer` and `extracted` (from the record's first
 * score entry, the graph's own scorer). Each cut at SAMPLE_TEXT_CHARS so one long answer cannot
 * swell a spreadsheet row (docs/export.md).
 */
import type { EpisodeRecord, ScoreTarget } from '../store/types.js';

/** Characters kept of each sample column; a longer text ends in `…` within this length. */
export const SAMPLE_TEXT_CHARS = 1000;

export const SAMPLE_COLUMNS = ['input', 'target', 'answer', 'extracted'] as const;
export type SampleColumn = (typeof SAMPLE_COLUMNS)[number];

export const cutText = (text: string, max = SAMPLE_TEXT_CHARS): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A target as one text: a string as it is, a number as JavaScript writes it, a list of accepted answers as JSON. */
export const targetText = (t: ScoreTarget): string => (typeof t === 'string' ? t : typeof t === 'number' ? String(t) : JSON.stringify(t));

/** Whether the record is a dataset episode's: it names its sample or carries a score. */
export const isSampleRecord = (r: EpisodeRecord): boolean => r.sampleId !== undefined || (r.scores?.length ?? 0) > 0;

/** The four columns of a record, null where it has none (not a dataset episode, or no score entry). */
export function sampleColumnsOf(r: EpisodeRecord): Record<SampleColumn, string | null> {
  const first = r.scores?.[0];
  const cut = (v: string | null | undefined): string | null => (v === null || v === undefined ? null : cutText(v));
  return {
    input: r.sampleId !== undefined ? cut(r.instruction) : null,
    target: first && first.target !== null ? cutText(targetText(first.target)) : null,
    answer: cut(first?.answer),
    extracted: cut(first?.extracted),
  };
}
