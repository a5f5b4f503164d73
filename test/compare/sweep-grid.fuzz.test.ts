/** Generated sweep grids: each gives its configs at once, or is refused naming the axis or the size, never hangs. */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { gridPoints, MAX_SWEEP_RUNS, parseGrid } from '../../src/compare/sweep-grid.js';
import { attempt, expectCoded, fuzzParams, nastyKey, nastyValue, reportFuzz } from '../support/fuzz.js';

const startedAt = Date.now();
afterAll(() => reportFuzz('sweep grids', startedAt));

const axis = fc.oneof({ weight: 3, arbitrary: fc.constantFrom('agent.epsilon', 'env.size', 'agent.k', 'a.b.c') }, nastyKey);
const values = fc.oneof(
  { weight: 3, arbitrary: fc.array(fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 4 })), { maxLength: 12 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 40 }).map((n) => Array.from({ length: n }, (_, i) => i)) },
  { weight: 1, arbitrary: nastyValue },
);
const grid = fc.oneof({ weight: 5, arbitrary: fc.dictionary(axis, values, { maxKeys: 9 }) }, { weight: 1, arbitrary: nastyValue });

describe('sweep grids under generated input', () => {
  it('a grid gives at most the sweep limit of configs, or is refused naming what is wrong', () => {
    fc.assert(
      fc.property(grid, (g) => {
        const r = attempt(() => gridPoints(g));
        if (!r.ok) {
          expectCoded(r.error, ['BAD_USER_INPUT']);
          expect(r.error.message).toMatch(/grid/);
          return;
        }
        expect(r.value.length).toBeLessThanOrEqual(MAX_SWEEP_RUNS);
        expect(r.value.length).toBe(parseGrid(g).reduce((n, a) => n * a.values.length, 1));
      }),
      fuzzParams(800),
    );
  });

  it('seven axes of ten values are refused by their count at once (the product of 10^7 points was built first)', () => {
    const g = Object.fromEntries(Array.from({ length: 7 }, (_, a) => [`agent.k${a}`, Array.from({ length: 10 }, (_, i) => i)]));
    const r = attempt(() => gridPoints(g));
    expect(r.ok).toBe(false);
    if (!r.ok) expectCoded(r.error, ['BAD_USER_INPUT'], 'the grid has 10000000 configs (10 × 10 × 10 × 10 × 10 × 10 × 10 values)');
  });
});
