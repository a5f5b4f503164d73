/**
 * One score of one episode: what a `score__*` node outputs on its `score` port and what a
 * record keeps in `scores` (the original first, then one per rescoring).
 */

/** A sample's expected answer: a string, a list of acceptable strings, a number or a label. */
export type ScoreTarget = string | number | string[];

export interface ScoreEntry {
  /** The scorer's registry name (`exact`, `f1`, `model_graded`, …). */
  scorer: string;
  /** 0..1; 1 is a correct answer. */
  value: number;
  /** The answer as the agent gave it (null when there was none). */
  answer: string | null;
  /** What the scorer took from the answer (normalised text, the number, the letter …); null when nothing was found. */
  extracted: string | null;
  target: ScoreTarget | null;
  /** The sample's choices, when it had some (so a rescoring with `choice` can map choice texts to letters). */
  choices?: string[];
  /** One line saying why the value is what it is. */
  explanation: string;
  /** The scorer's config when it was not the default (rescoring records the one it used). */
  config?: Record<string, unknown>;
  /** Set on entries added by a rescoring, after the run. */
  rescored?: boolean;
}

const isTarget = (v: unknown): v is ScoreTarget =>
  typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || (Array.isArray(v) && v.every((x) => typeof x === 'string'));

/** Whether `v` has the shape of a score entry (a node's `score` output is checked before it reaches a record). */
export function isScoreEntry(v: unknown): v is ScoreEntry {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.scorer === 'string' &&
    typeof o.value === 'number' &&
    Number.isFinite(o.value) &&
    o.value >= 0 &&
    o.value <= 1 &&
    (o.answer === null || typeof o.answer === 'string') &&
    (o.extracted === null || typeof o.extracted === 'string') &&
    (o.target === null || isTarget(o.target)) &&
    typeof o.explanation === 'string'
  );
}
