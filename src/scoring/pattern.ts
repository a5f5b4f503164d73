/**
 * A regular expression from the config finds the answer: its first capture group that took
 * part in the match (or, without groups, the whole match) is extracted and compared with the
 * target as `exact` does. Without a target, a match is correct.
 */
import safeRegex from 'safe-regex2';
import { BadInputError } from '../errors.js';
import { normalizeAnswer } from './normalize.js';
import { targetList, type Scorer } from './scorer.js';

function compile(pattern: string, flags: string): RegExp {
  try {
    return new RegExp(pattern, flags.includes('g') ? flags : `${flags}g`);
  } catch (err) {
    throw new BadInputError(`scorer "pattern": config "pattern" is not a valid regular expression: ${(err as Error).message}`);
  }
}

/**
 * Refuses a pattern that could backtrack catastrophically: scores are computed on the server's
 * own thread, so one `(a+)+$` against a long answer would stall every request for minutes.
 */
function checkBacktracking(pattern: string): void {
  // The checker's parser does not know lookbehinds; a lookahead has the same quantifier structure.
  const shape = pattern.replaceAll('(?<=', '(?=').replaceAll('(?<!', '(?!');
  if (!safeRegex(shape)) {
    throw new BadInputError(
      `scorer "pattern": config "pattern" /${pattern}/ is refused: it could backtrack catastrophically and stall the server (a quantified group holding another quantifier, like (a+)+, or more than 25 quantifiers), or it uses syntax this check cannot read; rewrite it without nested quantifiers`,
    );
  }
}

export const patternScorer: Scorer = {
  name: 'pattern',
  description:
    'A regular expression (config "pattern") finds the answer; its first capture group that took part in the match, else the whole match, is compared with the target as exact does. No target: a match is correct.',
  config: {
    pattern: {
      type: 'string',
      description:
        'JavaScript regular expression; required. One that could backtrack catastrophically (nested quantifiers such as (a+)+) is refused',
      default: '',
    },
    flags: { type: 'string', default: 'i', description: 'RegExp flags (g is always added)' },
    match: { type: 'string', default: 'last', description: '"first" or "last": which match to take when there are several' },
  },
  needsTarget: false,
  check(config) {
    if (!config.pattern) throw new BadInputError('scorer "pattern": config "pattern" is required');
    compile(config.pattern as string, config.flags as string);
    checkBacktracking(config.pattern as string);
    const which = config.match;
    if (which !== 'first' && which !== 'last') {
      throw new BadInputError(`scorer "pattern": config "match" must be "first" or "last", got "${String(which)}"`);
    }
  },
  score({ answer, target }, config) {
    const pattern = config.pattern as string;
    const which = config.match as string;
    const matches = [...answer.matchAll(compile(pattern, config.flags as string))];
    const m = which === 'first' ? matches[0] : matches[matches.length - 1];
    if (!m) return { value: 0, extracted: null, explanation: `no match of /${pattern}/` };
    const raw = m.length > 1 ? (m.slice(1).find((g) => g !== undefined) ?? '') : m[0];
    const got = normalizeAnswer(raw);
    if (target === null) return { value: 1, extracted: got, explanation: `matched "${raw}" (no target to compare)` };
    const hit = targetList(target).find((t) => normalizeAnswer(t) === got);
    return {
      value: hit === undefined ? 0 : 1,
      extracted: got,
      explanation: hit === undefined ? `extracted "${got}" matches no target` : `extracted "${got}" equals target "${hit}"`,
    };
  },
};
