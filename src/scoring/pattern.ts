/**
 * A regular expression from the config finds the answer: its first capture group that took
 * part in the match (or, without groups, the whole match) is extracted and compared with the
 * target as `exact` does. Without a target, a match is correct.
 */
import { createContext, Script, type Context } from 'node:vm';
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

/**
 * The longest one pattern may search one answer. A pattern the static check lets through can
 * still backtrack for ever on some text (`^(a|a)*$` on thirty `a`s and a `!`); stopped here, it
 * fails that answer's scoring instead of freezing the score host, and with it every run's scoring.
 */
export const PATTERN_TIME_LIMIT_MS = 1000;

/** A pattern that searched one answer for longer than PATTERN_TIME_LIMIT_MS: the user's pattern is at fault, not the answer. */
export class PatternTimeoutError extends BadInputError {
  constructor(pattern: string, answerLength: number, limitMs: number) {
    super(
      `scorer "pattern": config "pattern" /${pattern}/ searched the answer (${answerLength} characters) for more than ${limitMs} ms and was stopped: it backtracks catastrophically on this text; rewrite it so that no two alternatives or quantifiers can match the same text (as in (a|a)*)`,
    );
  }
}

/**
 * Where the search runs under a time limit: a script of its own context, which Node stops
 * (V8's TerminateExecution, which also interrupts a regular expression while it backtracks)
 * once it passes the limit. The search itself is a function of this realm, so the matches are
 * ordinary arrays. Made on first use, once per thread.
 */
let guard: { context: Context; script: Script } | undefined;

/** Every match of `re` in `answer`; PatternTimeoutError when the search passes `limitMs`. */
export function matchesWithin(answer: string, re: RegExp, pattern: string, limitMs = PATTERN_TIME_LIMIT_MS): RegExpExecArray[] {
  guard ??= { context: createContext({ search: null }), script: new Script('search()', { filename: 'pattern-search' }) };
  const { context, script } = guard;
  context.search = () => [...answer.matchAll(re)];
  try {
    return script.runInContext(context, { timeout: limitMs }) as RegExpExecArray[];
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new PatternTimeoutError(pattern, answer.length, limitMs);
    throw err;
  } finally {
    context.search = null;
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
        'JavaScript regular expression; required. One that could backtrack catastrophically (nested quantifiers such as (a+)+) is refused, and one that searches an answer for more than 1 s is stopped (that answer is not scored)',
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
    const matches = matchesWithin(answer, compile(pattern, config.flags as string), pattern);
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
