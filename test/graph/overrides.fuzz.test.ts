/**
 * Generated overrides and `--set` flags against a real graph and the built-in nodesets: each is
 * applied and validated, or refused with a coded error that names the node, key or flag.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GraphSpec } from '../../src/core/types.js';
import { applyOverrides, MAX_OVERRIDE_DEPTH, parseGraph, parseSetFlags, validateGraph } from '../../src/graph/graph.js';
import { NodesetRegistry } from '../../src/nodeset-registry/registry.js';
import { BUILTIN_GRAPHS_DIR } from '../../src/paths.js';
import { parseRunInput } from '../../src/spec/parse-run-spec.js';
import { RUN_LIMITS } from '../../src/spec/run-spec.js';
import { attempt, expectCoded, fuzzParams, nastyKey, nastyString, nastyValue, nested, reportFuzz, withOwnKey } from '../support/fuzz.js';

const startedAt = Date.now();
afterAll(() => reportFuzz('overrides', startedAt));

const graph: GraphSpec = parseGraph(JSON.parse(readFileSync(join(BUILTIN_GRAPHS_DIR, 'gridnav_planner.json'), 'utf8')), 'gridnav_planner');
let registry: NodesetRegistry;
beforeAll(async () => {
  registry = await NodesetRegistry.scan({});
});

const nodeId = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('env', 'agent', 'result') }, nastyKey);
const configKey = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('epsilon', 'seed', 'maze', 'size', 'dataset', 'split') }, nastyKey);
const configValue = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(fc.double({ min: 0, max: 1 }), fc.integer({ min: -5, max: 50 }), fc.boolean(), fc.constant(null)) },
  nastyValue,
);
/** node id → patch, the patch's keys often ones the nodesets declare; now and then an own `__proto__` key. */
const overrides: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.dictionary(nodeId, fc.dictionary(configKey, configValue, { maxKeys: 3 }), { maxKeys: 3 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), nastyValue, fc.boolean())
      .map(([k, v, inPatch]) => (inPatch ? { agent: withOwnKey({}, k, v) } : withOwnKey({}, k, { epsilon: 0.2 }))),
  },
  { weight: 1, arbitrary: nastyValue },
);

/** The known message for overrides too deep to measure (being reworded elsewhere): still a coded refusal of the field. */
const tooDeepToMeasure = (message: string): boolean => message.includes('got Infinity bytes');

describe('overrides under generated input', () => {
  it('a submitted run checks them, then they apply to the graph and validate, or are refused naming what is wrong', () => {
    fc.assert(
      fc.property(overrides, (o) => {
        const input = attempt(() => parseRunInput({ graphName: 'gridnav_planner', episodeCount: 1, overrides: o }));
        if (!input.ok) {
          expectCoded(input.error, ['BAD_USER_INPUT'], 'overrides');
          return;
        }
        const checked = input.value.overrides;
        expect(Buffer.byteLength(JSON.stringify(checked))).toBeLessThanOrEqual(RUN_LIMITS.maxOverridesBytes);
        const applied = attempt(() => applyOverrides(graph, checked));
        if (!applied.ok) {
          expectCoded(applied.error, ['BAD_USER_INPUT'], 'override for');
          return;
        }
        // Overrides patch copies: the graph they were applied to is unchanged.
        expect(graph.nodes.find((n) => n.id === 'agent')?.config).toEqual({ epsilon: 0.1 });
        const valid = attempt(() => validateGraph(applied.value, registry));
        if (!valid.ok) expectCoded(valid.error, ['GRAPH_INVALID'], 'config');
      }),
      fuzzParams(700),
    );
  });

  it('deeply nested overrides are refused as the overrides, never a stack overflow', () => {
    const depths = fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 200_000 }));
    fc.assert(
      fc.property(depths, fc.constantFrom<'array' | 'object'>('array', 'object'), (depth, kind) => {
        const r = attempt(() =>
          parseRunInput({ graphName: 'gridnav_planner', episodeCount: 1, overrides: { agent: { deep: nested(depth, 1, kind) } } }),
        );
        if (!r.ok) {
          expectCoded(r.error, ['BAD_USER_INPUT'], 'overrides');
          if (!tooDeepToMeasure(r.error.message)) expect(r.error.message).toMatch(/at most 65536 bytes|nests deeper than \d+ levels/);
          return;
        }
        const applied = attempt(() => applyOverrides(graph, r.value.overrides));
        // The patch is level 1, `deep` level 2, and each nesting one more.
        if (depth + 1 > MAX_OVERRIDE_DEPTH) {
          expect(applied.ok).toBe(false);
          if (!applied.ok)
            expectCoded(applied.error, ['BAD_USER_INPUT'], `override for node "agent" nests deeper than ${MAX_OVERRIDE_DEPTH} levels`);
        } else if (!applied.ok) expectCoded(applied.error, ['BAD_USER_INPUT']);
      }),
      fuzzParams(60),
    );
  });

  it('an override a few thousand levels deep, within the byte limit, is refused by depth (it overflowed the stack copying it)', () => {
    // The run spec refuses it first; applyOverrides, which graph files and older paths reach too, refuses it on its own.
    const spec = attempt(() =>
      parseRunInput({ graphName: 'gridnav_planner', episodeCount: 1, overrides: { agent: { deep: nested(3000, 1, 'array') } } }),
    );
    expect(spec.ok).toBe(false);
    if (!spec.ok) expectCoded(spec.error, ['BAD_USER_INPUT'], 'nests deeper than');
    const overrides = { agent: { deep: nested(3000, 1, 'array') } };
    const r = attempt(() => applyOverrides(graph, overrides));
    expect(r.ok).toBe(false);
    if (!r.ok) expectCoded(r.error, ['BAD_USER_INPUT'], 'override for node "agent" nests deeper than 64 levels');
    expect(applyOverrides(graph, { agent: { deep: nested(62, 1, 'object') } }).nodes[1]?.config?.deep).toEqual(nested(62, 1, 'object'));
  });

  it('--set flags parse to node → patch, or are refused naming the flag', () => {
    const segment = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('agent', 'env', 'epsilon', 'opts', 'size') }, nastyKey);
    const flag = fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .tuple(
            fc.array(segment, { minLength: 1, maxLength: 4 }),
            fc.oneof(
              nastyString,
              fc.jsonValue().map((v) => JSON.stringify(v)),
            ),
          )
          .map(([path, value]) => `${path.join('.')}=${value}`),
      },
      nastyString,
    );
    fc.assert(
      fc.property(fc.array(flag, { maxLength: 5 }), (flags) => {
        const r = attempt(() => parseSetFlags(flags));
        if (!r.ok) {
          expectCoded(r.error, ['BAD_USER_INPUT'], '--set "');
          return;
        }
        // Every flag's node is an own key of the result, holding a plain object: nothing lands on a prototype.
        for (const f of flags) {
          const node = f.slice(0, f.indexOf('=')).split('.')[0]!;
          expect(Object.hasOwn(r.value, node)).toBe(true);
          expect(Object.getPrototypeOf(r.value[node])).toBe(Object.prototype);
        }
        const input = attempt(() => parseRunInput({ graphName: 'g', episodeCount: 1, overrides: r.value }));
        if (!input.ok) expectCoded(input.error, ['BAD_USER_INPUT'], 'overrides');
      }),
      fuzzParams(600),
    );
  });

  it.each([['toString.agent=[]'], ['valueOf.x=1'], ['agent.toString.x=1', 'agent.epsilon=0.2']])(
    '--set with a key every object inherits keeps it as its own key: %j',
    (...flags) => {
      const parsed = parseSetFlags(flags);
      const node = flags[0]!.split('.')[0]!;
      expect(Object.hasOwn(parsed, node)).toBe(true);
      expect(Object.prototype.toString).not.toHaveProperty('agent');
      expect(parseSetFlags(['toString.agent=[]'])).toEqual(JSON.parse('{"toString": {"agent": []}}'));
    },
  );
});
