/**
 * Multiple choice: the answer's letter (A, B, C …) against the target's. The letter is read,
 * first match wins, from "answer is (B)" / "Answer: B" forms, then a reply that is only a
 * letter ("B", "(B)", "B.", "B) Paris"), then a lone "(B)" anywhere; failing those, a reply
 * equal to one choice's text (normalised) is that choice. The target is a letter, a choice's
 * text, or a 0-based index into the choices. Letters beyond the number of choices (when
 * choices are given) are not read.
 */
import { normalizeAnswer } from './normalize.js';
import type { Scorer } from './scorer.js';
import type { ScoreTarget } from '../core/score-entry.js';

const letterAt = (i: number): string => String.fromCharCode(65 + i);

function extractLetter(answer: string, choices: readonly string[] | undefined): string | undefined {
  const last = choices && choices.length > 0 ? letterAt(Math.min(choices.length, 26) - 1) : 'Z';
  const upper = `[A-${last}]`;
  const any = `[A-${last}a-${last.toLowerCase()}]`;
  const forms = [
    // Bare letters only in capitals here, so "the answer is a bit …" reads no "A".
    new RegExp(String.raw`(?:answer|Answer|ANSWER)\s*(?:is|IS|:)?\s*:?\s*\**\s*(?:\((${any})\)|(${upper}))(?![A-Za-z])`, 'g'),
    new RegExp(String.raw`^\s*\(?(${any})\)?\s*(?:[.):]|$)`, 'g'),
    new RegExp(String.raw`\((${any})\)`, 'g'),
  ];
  for (const re of forms) {
    const all = [...answer.matchAll(re)];
    // The last statement of the answer wins ("not (A) … the answer is (C)").
    const m = all[all.length - 1];
    if (m) return (m[1] ?? m[2])!.toUpperCase();
  }
  if (choices) {
    const got = normalizeAnswer(answer);
    const i = choices.findIndex((c) => normalizeAnswer(c) === got);
    if (i >= 0) return letterAt(i);
  }
  return undefined;
}

function targetLetter(target: ScoreTarget | null, choices: readonly string[] | undefined): string | undefined {
  if (target === null || Array.isArray(target)) return undefined;
  if (typeof target === 'number') return Number.isInteger(target) && target >= 0 && target < 26 ? letterAt(target) : undefined;
  const t = target.trim();
  if (/^\(?[A-Za-z]\)?$/.test(t)) return t.replace(/[()]/g, '').toUpperCase();
  if (choices) {
    const i = choices.findIndex((c) => normalizeAnswer(c) === normalizeAnswer(t));
    if (i >= 0) return letterAt(i);
  }
  return undefined;
}

export const choiceScorer: Scorer = {
  name: 'choice',
  description:
    'Multiple choice: the letter read from the answer ("The answer is (B)", "B", "B) …", or a choice\'s text) equals the target (a letter, a choice\'s text or a 0-based index).',
  config: {},
  needsTarget: true,
  score({ answer, target, choices }) {
    const want = Array.isArray(target) ? target.map((t) => targetLetter(t, choices)) : [targetLetter(target, choices)];
    const wants = want.filter((w): w is string => w !== undefined);
    if (wants.length === 0) return { value: 0, extracted: null, explanation: `the target ${JSON.stringify(target)} names no choice` };
    const got = extractLetter(answer, choices);
    if (got === undefined) return { value: 0, extracted: null, explanation: 'no choice letter in the answer' };
    const ok = wants.includes(got);
    return {
      value: ok ? 1 : 0,
      extracted: got,
      explanation: ok ? `chose ${got}, the target` : `chose ${got}, the target is ${wants.join(' or ')}`,
    };
  },
};
