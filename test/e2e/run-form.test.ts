/** The New run and Play form model starts from the schema's declared defaults and parses into variables the schema takes. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, coerceInputValue, execute, type GraphQLInputType, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { documentText } from '../../web/src/api/client.js';
import { START_EVAL_INPUT_DEFAULTS } from '../../web/src/api/inputDefaults.js';
import { resolveStepBudget } from '../../src/eval-process/step-budget.js';
import { formFromSpec, initialRunForm, stepBudgetPlaceholder, toPlayVariables, toStartEvalInput } from '../../web/src/lib/runForm.js';

const schema = buildSchema(readFileSync(join(PACKAGE_ROOT, 'schema', 'schema.graphql'), 'utf8'));

async function serverDefaults() {
  const r = await execute({ schema, document: parse(documentText(START_EVAL_INPUT_DEFAULTS)) });
  expect(r.errors).toBeUndefined();
  return (r.data as { __type: { inputFields: Array<{ name: string; defaultValue: string | null }> } }).__type.inputFields;
}

describe('run form model', () => {
  it('starts from the defaults StartEvalInput declares', async () => {
    const form = initialRunForm(await serverDefaults(), 'gridnav');
    expect(form).toMatchObject({
      graphName: 'gridnav',
      episodeCount: '10',
      workerCount: '1',
      seed: '0',
      priority: '0',
      episodeOffset: '0',
      exclusiveGpu: false,
      viaSubprocess: true,
      stepBudget: '',
      marginalVramMb: '',
      overrides: '',
      index: '0',
    });
  });

  it('parses into a StartEvalInput the schema accepts, leaving blanks to the server', async () => {
    const form = initialRunForm(await serverDefaults(), 'gridnav');
    const input = toStartEvalInput({ ...form, stepBudget: ' ', dataset: 'val' }, { agent: { epsilon: 0.2 } });
    expect(input).toMatchObject({
      episodeCount: 10,
      workerCount: 1,
      seed: 0,
      dataset: 'val',
      overrides: { agent: { epsilon: 0.2 } },
    });
    expect(input.stepBudget).toBeUndefined();
    const type = schema.getType('StartEvalInput') as GraphQLInputType;
    expect(() => coerceInputValue(JSON.parse(JSON.stringify(input)), type)).not.toThrow();
  });

  it("shows what a blank step budget plays: the env's, else the graph's, else the server's own", () => {
    expect(stepBudgetPlaceholder(300)).toBe(`env or ${resolveStepBudget({ graph: 300 }).budget}`);
    expect(stepBudgetPlaceholder(null)).toBe(`env or ${resolveStepBudget({}).budget}`);
  });

  it('sends what is not a number as typed, so the server refuses it by name', async () => {
    const form = initialRunForm(await serverDefaults(), 'gridnav');
    expect(toStartEvalInput({ ...form, workerCount: 'many' }, null).workerCount).toBe('many');
    expect(toPlayVariables({ ...form, index: '' }, null)).toMatchObject({
      graphName: 'gridnav',
      index: '',
      seed: 0,
    });
  });

  it('Run again fills every field from a spec, keeps fields it has no input for, and gives back the same input', async () => {
    const defaults = await serverDefaults();
    const spec = {
      graphName: 'gridnav_planner',
      episodeCount: 40,
      workerCount: 4,
      seed: 7,
      stepBudget: 45,
      perStepTimeoutSec: 0.5,
      priority: 2,
      exclusiveGpu: false,
      viaSubprocess: true,
      overrides: { agent: { epsilon: 0.3 } },
      dataset: 'mini',
      episodeOffset: 5,
      name: 'old name',
      tags: ['a'],
      // What the system added at submit is not an input: left behind.
      runId: '20260101_000000',
      createdAt: '2026-01-01T00:00:00Z',
      graph: { name: 'gridnav_planner', nodes: [], edges: [] },
    };
    // A field the form has no input for (here `shardSize`, as a later StartEvalInput field would be) is carried as it is.
    const fields = [...defaults.map((d) => d.name), 'shardSize'];
    const form = formFromSpec(initialRunForm(defaults, 'other'), { ...spec, shardSize: 3 }, fields, {
      name: 'edited',
      tags: ['a', 'b'],
      note: null,
    });
    expect(form).toMatchObject({
      graphName: 'gridnav_planner',
      episodeCount: '40',
      seed: '7',
      stepBudget: '45',
      perStepTimeoutSec: '0.5',
      name: 'edited',
      tags: 'a, b',
      carried: { shardSize: 3 },
    });
    const { runId: _r, createdAt: _c, graph: _g, ...asInput } = spec;
    const { shardSize, ...input } = toStartEvalInput(form, JSON.parse(form.overrides)) as ReturnType<typeof toStartEvalInput> & {
      shardSize?: number;
    };
    expect(shardSize).toBe(3);
    expect(input).toEqual({ ...asInput, name: 'edited', tags: ['a', 'b'] });
    const type = schema.getType('StartEvalInput') as GraphQLInputType;
    expect(() => coerceInputValue(JSON.parse(JSON.stringify(input)), type)).not.toThrow();
  });
});
