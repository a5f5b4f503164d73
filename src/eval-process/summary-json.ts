/**
 * summary.json's text put together from each record's text serialised once, byte for byte what
 * `JSON.stringify(summary, null, 2) + '\n'` (writeJsonAtomic) writes: a write then costs the
 * concatenation of the records' texts, not a serialisation of the whole run.
 */
import type { EpisodeRecord, RunSummary } from '../store/types.js';

/** Stands in for the episodes while the other fields are serialised; JSON escapes the NUL, so no field's text can hold it raw. */
const SLOT = '\u0000episodes';
/** Top-level keys are the only ones at two spaces after a newline (string values never hold a raw newline). */
const SLOT_TEXT = `\n  "episodes": ${JSON.stringify(SLOT)}`;

/** A record's text as an element of summary.json's `episodes` array (two levels in). */
export function recordJsonInSummary(record: EpisodeRecord): string {
  return `    ${JSON.stringify(record, null, 2).replaceAll('\n', '\n    ')}`;
}

/**
 * The text of `summary` with, as its `episodes`, the records whose texts are `episodeTexts`, in
 * that order; `summary.episodes` itself is not read, only its place among the keys.
 */
export function summaryJsonText(summary: RunSummary, episodeTexts: readonly string[]): string {
  // Spread, then `episodes` reassigned: the key keeps its place in the summary's key order.
  const text = JSON.stringify({ ...summary, episodes: SLOT }, null, 2);
  const at = text.indexOf(SLOT_TEXT);
  if (at < 0) throw new Error('summary.json: the episodes field is missing from the summary');
  const episodes = episodeTexts.length === 0 ? '[]' : `[\n${episodeTexts.join(',\n')}\n  ]`;
  return `${text.slice(0, at)}\n  "episodes": ${episodes}${text.slice(at + SLOT_TEXT.length)}\n`;
}
