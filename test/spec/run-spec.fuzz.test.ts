/** Generated run inputs and spec.json contents: every one parses or is refused with a coded error naming the field. */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePlayInput, parseRunInput, parseRunSpec } from '../../src/spec/parse-run-spec.js';
import { RUN_LIMITS } from '../../src/spec/run-spec.js';
import { attempt, expectCoded, fuzzParams, nastyNumber, nastyString, nastyValue, reportFuzz, withOwnKey } from '../support/fuzz.js';

const startedAt = Date.now();
afterAll(() => reportFuzz('run spec', startedAt));

/** A field's value: mostly one of its own kind (often in range), sometimes anything at all. */
const fieldValues: Record<string, fc.Arbitrary<unknown>> = {
  graphName: fc.oneof(fc.constantFrom('gridnav_random', 'g'), nastyString),
  episodeCount: fc.oneof(fc.integer({ min: 1, max: RUN_LIMITS.maxEpisodes }), nastyNumber),
  workerCount: fc.oneof(fc.integer({ min: 1, max: 64 }), nastyNumber),
  seed: fc.oneof(fc.maxSafeInteger(), nastyNumber),
  stepBudget: fc.oneof(fc.integer({ min: 1 }), nastyNumber),
  perStepTimeoutSec: fc.oneof(fc.double({ min: 0.001, max: 3600, noNaN: true }), nastyNumber),
  perCallTimeoutSec: fc.oneof(fc.double({ min: 0.001, max: 36000, noNaN: true }), nastyNumber),
  priority: fc.oneof(fc.integer({ min: -1e6, max: 1e6 }), nastyNumber),
  exclusiveGpu: fc.oneof(fc.boolean(), nastyValue),
  marginalVramMb: nastyNumber,
  memoryBudgetMb: nastyNumber,
  viaSubprocess: fc.oneof(fc.boolean(), nastyValue),
  overrides: fc.oneof(fc.dictionary(fc.string(), fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }))), nastyValue),
  dataset: nastyString,
  split: nastyString,
  episodeOffset: fc.oneof(fc.nat(), nastyNumber),
  sweepId: fc.oneof(fc.constant('sweep_20260101_120000'), nastyString),
  sweepPoint: nastyValue,
  name: nastyString,
  tags: fc.oneof(fc.array(nastyString, { maxLength: 40 }), nastyValue),
  note: fc.oneof(
    nastyString,
    fc.nat({ max: 12_000 }).map((n) => 'n'.repeat(n)),
  ),
  shardSize: fc.oneof(fc.integer({ min: 1, max: 100 }), nastyNumber),
  repeats: fc.oneof(fc.integer({ min: 1, max: 100 }), nastyNumber),
};

/** An input object: required fields usually present, a few optional ones, now and then an unknown or prototype key. */
const runInput: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc.record(fieldValues, { requiredKeys: [] }),
    fc.option(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'toString', 'frobnicate', 'graph'), nastyValue), { freq: 4 }),
  )
  .map(([fields, extra]) => (extra ? withOwnKey(fields, extra[0], extra[1]) : fields));

/** The field a refusal names, as the message starts: `<field> …` or `unknown field "<key>"`. */
function checkRefusal(error: unknown, input: Record<string, unknown>, required = ['graphName', 'episodeCount']): void {
  expectCoded(error, ['BAD_USER_INPUT']);
  const { field } = error as { field?: unknown };
  expect(typeof field).toBe('string');
  const head = String(field).split('.')[0]!;
  if (head !== '') expect([...Object.keys(input), ...required]).toContain(head);
  expect(error.message).toContain(head === '' ? 'the run input' : head);
}

describe('the run spec under generated input', () => {
  it('parseRunInput accepts or refuses naming the field, for any object', () => {
    fc.assert(
      fc.property(runInput, (input) => {
        const r = attempt(() => parseRunInput(input));
        if (!r.ok) {
          checkRefusal(r.error, input);
          return;
        }
        // What it accepts is within every limit and survives a JSON round trip unchanged.
        const v = r.value;
        expect(Number.isSafeInteger(v.episodeCount) && v.episodeCount >= 1 && v.episodeCount <= RUN_LIMITS.maxEpisodes).toBe(true);
        expect(v.episodeCount * (v.repeats ?? 1)).toBeLessThanOrEqual(RUN_LIMITS.maxEpisodes);
        expect(Buffer.byteLength(JSON.stringify(v.overrides))).toBeLessThanOrEqual(RUN_LIMITS.maxOverridesBytes);
        expect(parseRunInput(JSON.parse(JSON.stringify(v)))).toEqual(v);
      }),
      fuzzParams(600),
    );
  });

  it('parseRunInput refuses what is not an object, saying what it got', () => {
    fc.assert(
      fc.property(nastyValue, (raw) => {
        const r = attempt(() => parseRunInput(raw));
        if (r.ok) return;
        expectCoded(r.error, ['BAD_USER_INPUT']);
      }),
      fuzzParams(200),
    );
  });

  it('parsePlayInput accepts or refuses naming the field', () => {
    const play = fc.record(
      {
        graphName: fieldValues.graphName!,
        index: fc.oneof(fc.nat(), nastyNumber),
        seed: fieldValues.seed!,
        overrides: fieldValues.overrides!,
        dataset: nastyString,
        stepBudget: fieldValues.stepBudget!,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(play, (input) => {
        const r = attempt(() => parsePlayInput(input));
        if (!r.ok) checkRefusal(r.error, input, ['graphName', 'index']);
      }),
      fuzzParams(200),
    );
  });

  it('parseRunSpec refuses a bad spec.json with SPEC_INVALID naming the file', () => {
    const spec = fc.tuple(
      runInput,
      fc.record(
        { runId: nastyString, createdAt: nastyString, graph: nastyValue, shard: nastyValue, audit: nastyValue, episodeIndices: nastyValue },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(spec, ([input, added]) => {
        const r = attempt(() => parseRunSpec({ ...input, ...added }, 'runs/x/spec.json'));
        if (!r.ok) expectCoded(r.error, ['SPEC_INVALID'], 'runs/x/spec.json');
      }),
      fuzzParams(200),
    );
  });
});
