/** Generated run files (TOML, YAML, JSON; texts, tables and sweep grids): each is read or refused naming the file. */
import fc from 'fast-check';
import { stringify as toToml } from 'smol-toml';
import { stringify as toYaml } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { sweepRequestOf } from '../../src/cli/run-sweep.js';
import { parseRunInput } from '../../src/spec/parse-run-spec.js';
import { parseRunFile, runFileKeys } from '../../src/spec/run-file.js';
import { attempt, expectCoded, fuzzParams, nastyKey, nastyString, reportFuzz } from '../support/fuzz.js';

const startedAt = Date.now();
afterAll(() => reportFuzz('run files', startedAt));

const FILES = ['eval.toml', 'eval.yaml', 'eval.yml', 'eval.json'] as const;

/** Parsing, then what `evalctl run --config` does with the result: the run-spec check and the sweep request. */
function readAsCli(text: string, file: string): void {
  const r = attempt(() => parseRunFile(text, file));
  if (!r.ok) {
    expectCoded(r.error, ['BAD_USER_INPUT'], file);
    return;
  }
  const rf = r.value;
  for (const key of Object.keys(rf.fields)) expect(runFileKeys()).toContain(key);
  const input = attempt(() => parseRunInput(rf.fields));
  if (!input.ok) expectCoded(input.error, ['BAD_USER_INPUT']);
  if (rf.sweep) {
    const sweep = attempt(() => sweepRequestOf(rf.sweep!, file, rf.lineOf('sweep')));
    if (!sweep.ok) expectCoded(sweep.error, ['BAD_USER_INPUT']);
  }
}

/** Fragments of run-file syntax, joined at random: most texts are almost valid. */
const fragment = fc.oneof(
  fc.constantFrom(
    'graphName = "gridnav_random"\n',
    'episodeCount = 3\n',
    '[overrides.agent]\nepsilon = 0.2\n',
    '[sweep]\nseed = [1, 2]\n',
    '"overrides.agent.epsilon" = [0.1]\n',
    'graphName: gridnav_random\n',
    'sweep:\n  seed: [1, 2]\n  overrides.agent.epsilon: [0.1, 0.3]\n',
    'overrides: &o {agent: {epsilon: 0.2}}\n',
    'x: *o\n',
    'sweep: &s {seed: [*s]}\n',
    'overrides: &a {b: {c: *a}}\n',
    '<<: {graphName: g}\n',
    '{"graphName": "g", "episodeCount": 1}',
    '{"sweep": {"seed": [1, 1]}}',
    '{"a":1,"a":2}',
    '\uFEFF',
    '\r\n',
    '\u0000',
    '"\\u0000"',
    '[[sweep]]\n',
    '? [a]\n: 1\n',
    '!!binary aGk=\n',
    'a: !!js/function "x"\n',
    '1979-05-27T07:32:00Z',
    '9223372036854775807',
    'nan',
    'inf',
    '-0',
    '\t',
    '#',
    ':',
    '=',
    '[',
    ']',
    '{',
    '}',
    '"',
    "'",
    '- ',
    '&a ',
    '*a',
  ),
  nastyString,
);
const text = fc.array(fragment, { maxLength: 10 }).map((parts) => parts.join(''));

/** A table a user might write: run fields by their names, a sweep, and stray keys. */
const table: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(
  fc.oneof(fc.constantFrom(...runFileKeys(), 'graph', 'episodes', 'set', 'step-budget'), nastyKey),
  fc.oneof(
    fc.jsonValue({ maxDepth: 2, depthSize: 'xsmall' }),
    fc.dictionary(
      fc.oneof(fc.constantFrom('seed', 'overrides.agent.epsilon', 'workerCount'), nastyKey),
      fc.array(fc.jsonValue({ maxDepth: 1, depthSize: 'xsmall' }), { maxLength: 3 }),
      { maxKeys: 3 },
    ),
  ),
  { maxKeys: 5 },
);

function serialise(t: Record<string, unknown>, file: (typeof FILES)[number]): string | undefined {
  try {
    if (file.endsWith('.toml')) return toToml(t);
    if (file.endsWith('.json')) return JSON.stringify(t, null, 1);
    return toYaml(t);
  } catch {
    return undefined; // a value the format cannot write (TOML has no null): nothing to read back
  }
}

describe('run files under generated input', () => {
  it('any text, in each format, is read or refused naming the file', () => {
    fc.assert(
      fc.property(text, fc.constantFrom(...FILES), (t, file) => readAsCli(t, file)),
      fuzzParams(800),
    );
  });

  it('a written table reads back as it was, or is refused naming the file', () => {
    fc.assert(
      fc.property(table, fc.constantFrom(...FILES), (t, file) => {
        const written = serialise(t, file);
        if (written === undefined) return;
        readAsCli(written, file);
        const r = attempt(() => parseRunFile(written, file));
        if (r.ok && file.endsWith('.json')) {
          const { sweep, ...fields } = t;
          expect(r.value.fields).toEqual(fields);
          if (sweep !== undefined) expect(r.value.sweep).toEqual(sweep);
        }
      }),
      fuzzParams(300),
    );
  });

  it('any other extension is refused naming it', () => {
    fc.assert(
      fc.property(nastyString, (ext) => {
        const r = attempt(() => parseRunFile('graphName = "g"', `eval.${ext}`));
        if (!r.ok) expectCoded(r.error, ['BAD_USER_INPUT'], 'a run file is');
        else expect(['toml', 'yaml', 'yml', 'json']).toContain(ext.toLowerCase());
      }),
      fuzzParams(200),
    );
  });

  it.each([
    ['graphName: *g\n', 1, 'the alias *g names no anchor'],
    ['graphName: g\nepisodeCount: *n\nseed: &n 1\n', 2, 'the alias *n names no anchor'],
    ['sweep: &s {seed: [*s]}\n', 1, 'the alias *'],
    ['graphName: g\nsweep:\n  seed: &a [1, *a]\n', 3, 'the alias *a is inside the value it names'],
    ['overrides: &a {agent: {again: *a}}\n', 1, 'the alias *a is inside the value it names'],
  ])('a YAML alias with no anchor, or inside the value it names, is refused with its line: %j', (yaml, line, says) => {
    const r = attempt(() => parseRunFile(yaml, 'eval.yaml'));
    expect(r.ok).toBe(false);
    if (!r.ok) expectCoded(r.error, ['BAD_USER_INPUT'], `eval.yaml line ${line}: ${says}`);
  });

  it('a sweep axis named "__proto__" is kept as a key and refused by name', () => {
    const rf = parseRunFile('{"sweep": {"__proto__": [1], "seed": [1]}}', 'eval.json');
    expect(Object.keys(rf.sweep!)).toEqual(['__proto__', 'seed']);
    const r = attempt(() => sweepRequestOf(rf.sweep!, 'eval.json', 1));
    expect(r.ok).toBe(false);
    if (!r.ok) expectCoded(r.error, ['BAD_USER_INPUT'], '"sweep.__proto__"');
  });
});
