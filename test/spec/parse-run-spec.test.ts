/** The run-spec schema: defaults filled in once, every limit refused naming the field, spec.json read back checked. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePlayInput, parseRunInput, parseRunSpec } from '../../src/spec/parse-run-spec.js';
import { RUN_DEFAULTS, RUN_LIMITS, playRunInput, runSpecOf } from '../../src/spec/run-spec.js';

/** The defaults written into a spec; the seconds per step are resolved when the run runs (the graph may set them). */
const { perStepTimeoutSec: _resolvedWhenRun, ...FILLED } = RUN_DEFAULTS;
import { readSpec } from '../../src/store/run-dir.js';

const base = { graphName: 'gridnav_planner', episodeCount: 3 };

describe('parseRunInput', () => {
  it('fills in every default', () => {
    expect(parseRunInput(base)).toEqual({ ...base, ...FILLED, overrides: {} });
  });

  it.each([
    ['episodeCount', { episodeCount: 0 }, /^episodeCount must be an integer in 1\.\.100000, got 0$/],
    ['episodeCount', { episodeCount: RUN_LIMITS.maxEpisodes + 1 }, /episodeCount must be an integer in 1\.\.100000/],
    ['workerCount', { workerCount: RUN_LIMITS.maxWorkers + 1 }, /^workerCount must be an integer in 1\.\.64, got 65$/],
    ['workerCount', { workerCount: 1.5 }, /workerCount must be an integer/],
    ['seed', { seed: 2 ** 60 }, /^seed must be a safe integer \(at most 2\^53 − 1 either side of 0\), got 1152921504606847000$/],
    ['stepBudget', { stepBudget: 0 }, /^stepBudget must be an integer ≥ 1, got 0$/],
    ['perStepTimeoutSec', { perStepTimeoutSec: 0 }, /perStepTimeoutSec must be a positive number, at most 3600, got 0/],
    ['perStepTimeoutSec', { perStepTimeoutSec: 1e9 }, /perStepTimeoutSec must be a positive number, at most 3600/],
    ['priority', { priority: 2_000_000 }, /priority must be an integer in -1000000\.\.1000000/],
    ['exclusiveGpu', { exclusiveGpu: 'yes' }, /^exclusiveGpu must be true or false, got "yes"$/],
    ['marginalVramMb', { marginalVramMb: -1 }, /marginalVramMb must be a non-negative number/],
    ['memoryBudgetMb', { memoryBudgetMb: 0 }, /memoryBudgetMb must be a positive number/],
    ['overrides', { overrides: [1] }, /^overrides must be an object of node id → config patch/],
    ['overrides.agent', { overrides: { agent: 3 } }, /^overrides\.agent must be an object of config keys/],
    ['dataset', { dataset: '' }, /dataset must be a non-empty dataset name/],
    [
      'split',
      { split: 'x'.repeat(RUN_LIMITS.maxNameChars + 1) },
      /split must be a non-empty split name of at most 200 characters, got "x{50,}…$/,
    ],
    ['graphName', { graphName: '  ' }, /graphName must be a non-empty graph name/],
    ['episodeOffset', { episodeOffset: -1 }, /episodeOffset must be an integer ≥ 0/],
    ['repeats', { repeats: 0 }, /^repeats must be an integer in 1\.\.100, got 0$/],
    ['repeats', { repeats: 101 }, /^repeats must be an integer in 1\.\.100/],
    [
      'repeats',
      { episodeCount: 2000, repeats: 51 },
      /^repeats gives 2000 × 51 = 102000 plays; episodeCount × repeats must be at most 100000$/,
    ],
    // Too many episodes is said once, by episodeCount: no second error about plays without repeats.
    ['episodeCount', { episodeCount: 1e9 }, /^episodeCount must be an integer in 1\.\.100000, got 1000000000$/],
    ['episodeCount', { episodeCount: 1e9, repeats: 2 }, /^episodeCount must be an integer in 1\.\.100000, got 1000000000$/],
    ['frobnicate', { frobnicate: 1 }, /^unknown field "frobnicate"$/],
  ])('refuses a bad %s, naming it', (field, patch, message) => {
    let err: unknown;
    try {
      parseRunInput({ ...base, ...patch });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect((err as Error).message).toMatch(message);
  });

  it('names a missing field as required', () => {
    expect(() => parseRunInput({ graphName: 'g' })).toThrow(/^episodeCount is required$/);
  });

  it('names the field as the caller calls it', () => {
    expect(() => parseRunInput({ ...base, workerCount: 'many' }, { workerCount: '--workers' })).toThrow(
      /^--workers must be an integer in 1\.\.64, got "many"$/,
    );
  });

  it('refuses overrides over the size limit, naming the limit and not echoing the value', () => {
    const big = { agent: { epsilon: 'x'.repeat(1024 * 1024) } };
    let err: (Error & { field?: string; limit?: number }) | undefined;
    try {
      parseRunInput({ ...base, overrides: big });
    } catch (e) {
      err = e as typeof err;
    }
    expect(err).toMatchObject({ code: 'BAD_USER_INPUT', field: 'overrides', limit: RUN_LIMITS.maxOverridesBytes });
    expect(err!.message).toBe(
      `overrides must be at most ${RUN_LIMITS.maxOverridesBytes} bytes of JSON, got ${JSON.stringify(big).length} bytes`,
    );
    // Just under the limit passes.
    const fits = { agent: { note: 'x'.repeat(RUN_LIMITS.maxOverridesBytes - 100) } };
    expect(parseRunInput({ ...base, overrides: fits }).overrides).toEqual(fits);
  });

  it('refuses overrides nested past the depth limit, or holding themselves, saying so rather than giving a size', () => {
    const nested = (levels: number): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
      return v;
    };
    const limit = RUN_LIMITS.maxOverridesDepth;
    // The outer object and the node's patch are two levels.
    const fits = { agent: { deep: nested(limit - 2) } };
    expect(parseRunInput({ ...base, overrides: fits }).overrides).toEqual(fits);
    for (const levels of [limit - 1, 100_000]) {
      // 100,000 levels: as JSON text, the way a client sends it (JSON.stringify itself would overflow).
      const overrides =
        levels > 1000 ? JSON.parse(`{"agent":{"deep":${'['.repeat(levels)}${']'.repeat(levels)}}}`) : { agent: { deep: nested(levels) } };
      expect(() => parseRunInput({ ...base, overrides })).toThrow(
        expect.objectContaining({
          code: 'BAD_USER_INPUT',
          field: 'overrides',
          limit,
          message: `overrides nests deeper than ${limit} levels of objects and lists`,
        }),
      );
    }
    const cyclic: Record<string, unknown> = { epsilon: 0.1 };
    cyclic.self = cyclic;
    expect(() => parseRunInput({ ...base, overrides: { agent: cyclic } })).toThrow(/^overrides holds itself \(a cycle\)/);
  });
});

describe('Live Play input', () => {
  it('is a one-episode run whose offset is the index', () => {
    const play = parsePlayInput({ graphName: 'g', index: 7 });
    expect(play).toEqual({ graphName: 'g', index: 7, seed: RUN_DEFAULTS.seed, overrides: {} });
    expect(playRunInput(play)).toMatchObject({ graphName: 'g', episodeCount: 1, episodeOffset: 7, workerCount: RUN_DEFAULTS.workerCount });
    expect(() => parsePlayInput({ graphName: 'g', index: -1 })).toThrow(/index must be an integer ≥ 0/);
  });
});

describe('spec.json', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'spec-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const graph = { name: 'g', nodes: [{ id: 'out', type: 'graphOut' }], edges: [] };

  it('reads back what was written, defaults filled in for a spec that left them out', async () => {
    const spec = runSpecOf(parseRunInput(base), { runId: '20260101_000000', graph, createdAt: '2026-01-01T00:00:00.000Z' });
    await writeFile(join(dir, 'spec.json'), JSON.stringify(spec));
    expect(await readSpec(dir)).toEqual(spec);
    await writeFile(join(dir, 'spec.json'), JSON.stringify({ runId: 'r', createdAt: 'now', ...base }));
    expect(await readSpec(dir)).toMatchObject({ ...FILLED, overrides: {} });
  });

  it.each([
    [
      'a field of the wrong type',
      { runId: 'r', createdAt: 'now', ...base, workerCount: 'four' },
      'workerCount',
      /workerCount must be an integer in 1\.\.64, got "four"/,
    ],
    ['a field out of range', { runId: 'r', createdAt: 'now', ...base, dataset: 5 }, 'dataset', /dataset must be a non-empty dataset name/],
    ['a missing field', { createdAt: 'now', ...base }, 'runId', /runId is required/],
    [
      'a frozen graph that is not a graph',
      { runId: 'r', createdAt: 'now', ...base, graph: { name: 'g' } },
      'graph.nodes',
      /graph\.nodes is required/,
    ],
  ])('is SPEC_INVALID naming the field for %s', async (_what, json, field, message) => {
    await writeFile(join(dir, 'spec.json'), JSON.stringify(json));
    const err = await readSpec(dir).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SPEC_INVALID', field });
    expect((err as Error).message).toMatch(/^spec\.json of run spec-\w+ is not a valid run spec: /);
    expect((err as Error).message).toMatch(message);
  });

  it('is SPEC_INVALID when it is not JSON', async () => {
    await writeFile(join(dir, 'spec.json'), '{"runId": "r", "graphNa');
    await expect(readSpec(dir)).rejects.toMatchObject({ code: 'SPEC_INVALID', message: expect.stringMatching(/is not JSON/) });
  });

  it('parseRunSpec names its source', () => {
    expect(() => parseRunSpec([], 'here')).toThrow(/^here is not a valid run spec: /);
  });
});
