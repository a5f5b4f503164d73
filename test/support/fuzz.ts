/**
 * What the fuzz suites share: one seed for every suite (FUZZ_SEED, else a fixed one) so a CI
 * failure replays exactly, the case budget (FUZZ_SCALE multiplies every numRuns), a time bound
 * per case, the check that a refusal is one of the project's coded errors, and generators of
 * the values that break parsers (prototype keys, NaN/Infinity/-0, BOMs, controls, deep nesting).
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { CodedError, ERROR_CODES } from '../../src/errors.js';

const envSeed = process.env.FUZZ_SEED;
/** The seed of every property in this run; FUZZ_SEED=<n> replays one that failed. */
export const FUZZ_SEED = envSeed !== undefined && /^-?\d+$/.test(envSeed) ? Number(envSeed) : 0x5eed42;
const scale = Number(process.env.FUZZ_SCALE ?? '1');

/** Cases checked across the whole process, printed by `reportFuzz`. */
const counted = { cases: 0 };

/** fast-check's parameters for `numRuns` cases (times FUZZ_SCALE); a failure prints the seed and the shrunk case. */
export function fuzzParams<T>(numRuns: number): fc.Parameters<T> {
  return {
    seed: FUZZ_SEED,
    numRuns: Math.max(1, Math.round(numRuns * (Number.isFinite(scale) && scale > 0 ? scale : 1))),
    endOnFailure: false,
    reporter(details) {
      counted.cases += details.numRuns;
      if (details.failed) {
        const cause = details.errorInstance instanceof Error ? `\n${details.errorInstance.stack ?? details.errorInstance.message}` : '';
        let report: string;
        try {
          report = fc.defaultReportMessage(details) ?? '';
        } catch {
          // A counterexample nested too deep to print: its path still replays it.
          report = `Property failed (seed ${details.seed}, path "${details.counterexamplePath}"); the counterexample is too deep to print`;
        }
        throw new Error(`${report}${cause}\n(replay the whole suite with FUZZ_SEED=${FUZZ_SEED})`);
      }
    },
    asyncReporter: undefined,
  };
}

/** Async properties take the same parameters. */
export function fuzzParamsAsync<T>(numRuns: number): fc.Parameters<T> {
  const p = fuzzParams<T>(numRuns);
  const { reporter } = p;
  return { ...p, reporter: undefined, asyncReporter: async (d) => reporter?.(d) };
}

/** One line for the test log: how many cases ran and how long they took. */
export function reportFuzz(suite: string, startedAt: number): void {
  process.stdout.write(`[fuzz] ${suite}: ${counted.cases} cases in ${Date.now() - startedAt} ms (seed ${FUZZ_SEED})\n`);
}

/** Each case must end within this (ms): a parser that backtracks or loops shows up here, not as a stuck test. */
export const CASE_LIMIT_MS = 5000;

/** Runs `fn`, timing it: returns what it returned or the error it threw. Fails past CASE_LIMIT_MS. */
export function attempt<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
  const t0 = performance.now();
  let out: { ok: true; value: T } | { ok: false; error: unknown };
  try {
    out = { ok: true, value: fn() };
  } catch (error) {
    out = { ok: false, error };
  }
  const ms = performance.now() - t0;
  if (ms > CASE_LIMIT_MS) throw new Error(`a case took ${Math.round(ms)} ms (limit ${CASE_LIMIT_MS} ms)`);
  return out;
}

/** The async form of `attempt`; `limitMs` for a case that crosses a network or a disk. */
export async function attemptAsync<T>(
  fn: () => Promise<T>,
  limitMs = CASE_LIMIT_MS,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  const t0 = performance.now();
  let out: { ok: true; value: T } | { ok: false; error: unknown };
  try {
    out = { ok: true, value: await fn() };
  } catch (error) {
    out = { ok: false, error };
  }
  const ms = performance.now() - t0;
  if (ms > limitMs) throw new Error(`a case took ${Math.round(ms)} ms (limit ${limitMs} ms)`);
  return out;
}

/**
 * `error` must be a CodedError with one of `codes` (any coded one when absent) and a message
 * that says something (and, when `names` is given, holds it): never a raw TypeError or RangeError.
 */
export function expectCoded(error: unknown, codes?: readonly string[], names?: string): asserts error is CodedError {
  if (!(error instanceof CodedError)) {
    throw new Error(`not a coded error: ${error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error)}`);
  }
  expect(Object.hasOwn(ERROR_CODES, error.code)).toBe(true);
  if (codes) expect(codes).toContain(error.code);
  expect(error.message.trim().length).toBeGreaterThan(5);
  if (names !== undefined) expect(error.message).toContain(names);
}

/** Keys that reach a prototype, or are inherited by every object: each must be an ordinary key or a clear refusal. */
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'] as const;

/** Strings that tend to break parsers and messages. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\uFEFF',
      '\uFEFFx',
      '\u0000',
      '\u202Eevil',
      '\u2028\u2029',
      '\r\n',
      '\t',
      '"',
      "'",
      '\\',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a placeholder in the input, which must stay text
      '${x}',
      '\uD800',
      '\uDC00x',
      '😀',
      'a.b',
      '.',
      '..',
      '=',
      'NaN',
      'Infinity',
      '-0',
      '1e400',
      'null',
      'true',
      ...PROTO_KEYS,
    ),
  },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 3, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.nat({ max: 20_000 }).map((n) => 'x'.repeat(n)) },
);

/** Keys of generated objects: the nasty strings, and prototype keys more often. */
export const nastyKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...PROTO_KEYS) },
  { weight: 3, arbitrary: nastyString.filter((s) => s.length <= 200) },
);

/** Numbers JSON cannot hold or that compare oddly, among ordinary ones. */
export const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    0,
    1,
    -1,
    2 ** 31,
    2 ** 53,
    2 ** 53 + 2,
    1e308,
    5e-324,
  ),
  fc.integer(),
  fc.double(),
);

/** `[[[…]]]` or `{"a":{"a":…}}` `depth` levels deep, around `leaf`. */
export function nested(depth: number, leaf: unknown, kind: 'array' | 'object'): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v };
  return v;
}

/** Arbitrary values of any shape, with nasty keys, strings and numbers, and now and then a deep nest. */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.anything({ key: nastyKey, values: [nastyString, nastyNumber, fc.boolean(), fc.constant(null)], maxDepth: 4 }),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 50, max: 3000 }), fc.constantFrom<'array' | 'object'>('array', 'object'))
      .map(([d, k]) => nested(d, 1, k)),
  },
  { weight: 1, arbitrary: fc.dictionary(nastyKey, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) },
);

/** An object with an own `__proto__` key, as JSON.parse makes (an object literal would set the prototype instead). */
export function withOwnKey(o: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const out = { ...o };
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}
