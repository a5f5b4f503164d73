/** Each scorer on the answers models actually give, and the registry's refusals. */
import { describe, expect, it } from 'vitest';
import { findNumbers, lastNumber } from '../../src/scoring/numbers.js';
import { normalizeAnswer, squadTokens } from '../../src/scoring/normalize.js';
import { prepareScorer, scoreAnswer, scorerNames, UnknownScorerError } from '../../src/scoring/registry.js';
import type { ScoreTarget } from '../../src/core/score-entry.js';
import { matchesWithin, PatternTimeoutError } from '../../src/scoring/pattern.js';

const score = (scorer: string, answer: string | null, target: ScoreTarget | null, config?: Record<string, unknown>, choices?: string[]) =>
  scoreAnswer(prepareScorer(scorer, config), { answer, target, ...(choices ? { choices } : {}) });
const value = (...args: Parameters<typeof score>) => score(...args).value;

describe('normalisation', () => {
  it('trims, case-folds, collapses whitespace and strips trailing punctuation', () => {
    expect(normalizeAnswer('  The   Eiffel\tTower!! ')).toBe('the eiffel tower');
    expect(normalizeAnswer('Paris.')).toBe('paris');
    expect(normalizeAnswer('3.5')).toBe('3.5');
    expect(normalizeAnswer('Ｐａｒｉｓ')).toBe('paris');
  });
  it('SQuAD tokens drop punctuation and articles', () => {
    expect(squadTokens('The cat, a dog and an owl!')).toEqual(['cat', 'dog', 'and', 'owl']);
  });
});

describe('exact', () => {
  it('matches after normalisation; a list target accepts any entry; a number target its text', () => {
    expect(value('exact', ' paris. ', 'Paris')).toBe(1);
    expect(value('exact', 'Paris, France', 'Paris')).toBe(0);
    expect(value('exact', 'NYC', ['New York', 'nyc'])).toBe(1);
    expect(value('exact', '42', 42)).toBe(1);
    const s = score('exact', 'Lyon', 'Paris');
    expect(s).toMatchObject({ scorer: 'exact', value: 0, answer: 'Lyon', extracted: 'lyon', target: 'Paris' });
    expect(s.explanation).toContain('matches no target');
  });
  it('no answer scores 0; no target is refused', () => {
    expect(score('exact', null, 'x')).toMatchObject({ value: 0, extracted: null, explanation: 'no answer' });
    expect(() => score('exact', 'x', null)).toThrow(/needs a target/);
  });
});

describe('includes', () => {
  it('finds the target inside the answer', () => {
    expect(score('includes', 'I think it is PARIS, the capital.', 'paris')).toMatchObject({ value: 1, extracted: 'paris' });
    expect(value('includes', 'London', ['Paris', 'Lyon'])).toBe(0);
    expect(value('includes', 'anything', '')).toBe(0);
  });
});

describe('pattern', () => {
  it('takes the last match, its first capture group, and compares it like exact', () => {
    const cfg = { pattern: String.raw`answer:\s*(\w+)` };
    expect(score('pattern', 'answer: no… wait, Answer: Yes', 'yes', cfg)).toMatchObject({ value: 1, extracted: 'yes' });
    expect(score('pattern', 'answer: yes then answer: no', 'yes', { ...cfg, match: 'first' })).toMatchObject({ value: 1 });
    expect(score('pattern', 'nothing here', 'yes', cfg)).toMatchObject({ value: 0, extracted: null });
  });
  it('extracts the first capture group that took part in the match', () => {
    const cfg = { pattern: String.raw`answer: (\d+)|final: (\d+)` };
    expect(score('pattern', 'final: 7', '7', cfg)).toMatchObject({ value: 1, extracted: '7' });
    expect(score('pattern', 'answer: 3', '3', cfg)).toMatchObject({ value: 1, extracted: '3' });
    expect(score('pattern', 'y', null, { pattern: '(x)?y' })).toMatchObject({ value: 1, extracted: '' });
  });
  it('without a target a match is correct; bad configs are refused before scoring', () => {
    expect(value('pattern', 'ok DONE', null, { pattern: 'done' })).toBe(1);
    expect(() => prepareScorer('pattern', {})).toThrow(/"pattern" is required/);
    expect(() => prepareScorer('pattern', { pattern: '(' })).toThrow(/not a valid regular expression/);
    expect(() => prepareScorer('pattern', { pattern: 'x', match: 'middle' })).toThrow(/"first" or "last"/);
    expect(() => prepareScorer('pattern', { pattern: 'x', nope: 1 })).toThrow(/unknown config key "nope"/);
  });
  it('refuses a pattern that could backtrack catastrophically, naming it, and keeps ordinary ones', () => {
    for (const pattern of ['(a+)+$', String.raw`(\w+\s?)*$`, '(a*)*b']) {
      let err: unknown;
      try {
        prepareScorer('pattern', { pattern });
      } catch (e) {
        err = e;
      }
      expect(err).toMatchObject({ code: 'BAD_USER_INPUT' });
      expect((err as Error).message).toContain(`/${pattern}/ is refused: it could backtrack catastrophically`);
    }
    expect(score('pattern', 'Answer: Paris', 'paris', { pattern: String.raw`answer:\s*(\w+)` })).toMatchObject({ value: 1 });
    expect(value('pattern', '42', '42', { pattern: String.raw`^\d+$` })).toBe(1);
    expect(value('pattern', 'x=7 y=8', '8', { pattern: String.raw`(?<=y=)\d+` })).toBe(1);
    expect(value('pattern', 'says: B', 'b', { pattern: '(?<ans>[A-D])$' })).toBe(1);
  });
  it('stops a search that backtracks past its time limit with an error naming the pattern, and finds ordinary matches as matchAll does', () => {
    // Not nested quantifiers (the static check lets it through), yet 2^40 ways to fail on 40 a's and a "!".
    const slow = '^(a|a)*$';
    expect(() => prepareScorer('pattern', { pattern: slow })).not.toThrow();
    let err: unknown;
    try {
      matchesWithin(`${'a'.repeat(40)}!`, new RegExp(slow, 'g'), slow, 50);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PatternTimeoutError);
    expect(err).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect((err as Error).message).toBe(
      'scorer "pattern": config "pattern" /^(a|a)*$/ searched the answer (41 characters) for more than 50 ms and was stopped: it backtracks catastrophically on this text; rewrite it so that no two alternatives or quantifiers can match the same text (as in (a|a)*)',
    );
    // The same thread searches again afterwards, and its matches are this realm's arrays.
    const re = String.raw`(\w)=(\d+)`;
    const found = matchesWithin('x=4, y=15', new RegExp(re, 'g'), re);
    expect(found).toEqual([...'x=4, y=15'.matchAll(new RegExp(re, 'g'))]);
    expect(found.map((m) => [m[1], m[2], m.index])).toEqual([
      ['x', '4', 0],
      ['y', '15', 5],
    ]);
    expect(found[0]).toBeInstanceOf(Array);
    expect(value('pattern', 'aaaa', null, { pattern: slow })).toBe(1);
  });
});

describe('numbers in text', () => {
  it('reads separators, decimals, signs, exponents, fractions, currency and percent', () => {
    expect(findNumbers('1,234 and -2.5 and 1e3 and 3/4 and $1,200 and 50% and .5').map((n) => n.value)).toEqual([
      1234, -2.5, 1000, 0.75, 1200, 50, 0.5,
    ]);
    expect(findNumbers('1,2').map((n) => n.value)).toEqual([1, 2]);
    expect(findNumbers('pages 3-4').map((n) => n.value)).toEqual([3, 4]);
    expect(findNumbers('x/0 1/0').map((n) => n.value)).toEqual([0]);
    expect(lastNumber('no digits')).toBeUndefined();
  });
  it('reads a typographic minus as a sign, and thousands groups only when complete', () => {
    expect(findNumbers('−5 and ﹣6 and －7 and ‒8 and 1e−3').map((n) => n.value)).toEqual([-5, -6, -7, -8, 0.001]);
    expect(findNumbers('x−5, 3 − 4, pages 3–4').map((n) => n.value)).toEqual([5, 3, 4, 3, 4]);
    expect(findNumbers('3,14159').map((n) => n.value)).toEqual([3, 14159]);
    expect(findNumbers('1,234,5678').map((n) => n.value)).toEqual([1234, 5678]);
    expect(findNumbers('1,234,567 and 12,345.5').map((n) => n.value)).toEqual([1234567, 12345.5]);
  });
});

describe('numeric', () => {
  it('compares the last number with the target within the tolerance', () => {
    expect(score('numeric', 'Step 1: 12 + 30 = 42. The answer is 42.', 42)).toMatchObject({ value: 1, extracted: '42' });
    expect(value('numeric', 'The total is 1,234 apples', '1234')).toBe(1);
    expect(value('numeric', 'The answer is −5', 5)).toBe(0);
    expect(score('numeric', 'The answer is −5', -5)).toMatchObject({ value: 1, extracted: '-5' });
    expect(value('numeric', 'π ≈ 3,14159', 3141)).toBe(0);
    expect(value('numeric', 'about 3/4', 0.75)).toBe(1);
    expect(value('numeric', '41.9', 42)).toBe(0);
    expect(value('numeric', '41.9', 42, { abs_tol: 0.2 })).toBe(1);
    expect(value('numeric', '103', 100, { rel_tol: 0.05 })).toBe(1);
    expect(value('numeric', '106', 100, { rel_tol: 0.05 })).toBe(0);
    expect(value('numeric', '7', ['5', '7'])).toBe(1);
    expect(score('numeric', 'no idea', 3)).toMatchObject({ value: 0, extracted: null });
    expect(score('numeric', '3', 'three')).toMatchObject({ value: 0, explanation: 'the target holds no number' });
    expect(() => prepareScorer('numeric', { abs_tol: -1 })).toThrow(/must be ≥ 0/);
    expect(() => prepareScorer('numeric', { abs_tol: 'x' })).toThrow(/must be a number/);
  });
});

describe('choice', () => {
  const choices = ['Paris', 'London', 'Rome', 'Berlin'];
  it('reads the letter from the usual forms', () => {
    expect(score('choice', 'The answer is (B).', 'B')).toMatchObject({ value: 1, extracted: 'B' });
    expect(value('choice', 'Answer: C', 'C')).toBe(1);
    expect(value('choice', 'b', 'B')).toBe(1);
    expect(value('choice', 'D) Berlin', 'D')).toBe(1);
    expect(value('choice', 'Not (A). The answer is (C)', 'C')).toBe(1);
    expect(value('choice', 'the answer is a bit unclear, but (C)', 'C')).toBe(1);
    expect(value('choice', 'I would go with (a)', 'A')).toBe(1);
  });
  it('maps a choice text to its letter, and a target given as text or index', () => {
    expect(score('choice', 'Rome', 'C', undefined, choices)).toMatchObject({ value: 1, extracted: 'C' });
    expect(value('choice', '(A)', 'Paris', undefined, choices)).toBe(1);
    expect(value('choice', '(B)', 1, undefined, choices)).toBe(1);
    expect(value('choice', 'E', 'A', undefined, choices)).toBe(0);
    expect(score('choice', 'I do not know', 'A', undefined, choices)).toMatchObject({ value: 0, extracted: null });
    expect(score('choice', '(A)', 'Madrid', undefined, choices).explanation).toContain('names no choice');
  });
});

describe('f1', () => {
  it('is SQuAD token F1, the best over the targets', () => {
    expect(value('f1', 'The Eiffel Tower', 'eiffel tower')).toBe(1);
    // prediction {eiffel, tower, paris}, truth {eiffel, tower}: P 2/3, R 1 → F1 0.8
    expect(value('f1', 'Eiffel Tower, Paris', 'the Eiffel Tower')).toBeCloseTo(0.8, 10);
    expect(value('f1', 'tower', ['bridge', 'eiffel tower'])).toBeCloseTo(2 / 3, 10);
    expect(value('f1', 'a the', 'an')).toBe(1);
    expect(value('f1', 'nothing', 'else')).toBe(0);
  });
});

describe('registry', () => {
  it('lists the scorers and refuses an unknown one with UNKNOWN_SCORER naming the known ones', () => {
    expect(scorerNames()).toEqual(['choice', 'exact', 'f1', 'includes', 'numeric', 'pattern']);
    let err: unknown;
    try {
      prepareScorer('fuzzy');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UnknownScorerError);
    expect(err).toMatchObject({ code: 'UNKNOWN_SCORER' });
    expect((err as Error).message).toBe('unknown scorer "fuzzy" (known: choice, exact, f1, includes, numeric, pattern)');
  });
  it('records a non-default config on the entry', () => {
    expect(score('numeric', '1', 1, { abs_tol: 0.5 }).config).toEqual({ abs_tol: 0.5 });
    expect(score('numeric', '1', 1).config).toBeUndefined();
  });
  it('names a config value of the wrong type as it was written, an overflowing number as Infinity', () => {
    expect(() => prepareScorer('numeric', JSON.parse('{"abs_tol":1e400}') as Record<string, unknown>)).toThrow(
      'scorer "numeric": config "abs_tol" must be a finite number, got Infinity',
    );
    expect(() => prepareScorer('numeric', { rel_tol: -Infinity })).toThrow('config "rel_tol" must be a finite number, got -Infinity');
    expect(() => prepareScorer('numeric', { rel_tol: '0.1' })).toThrow('config "rel_tol" must be a number, got "0.1"');
  });
});
