/** A sweep grid: its points in axis order, the baseline first; a bad axis refused by name. */
import { describe, expect, it } from 'vitest';
import { gridPoints, parseGrid } from '../../src/compare/sweep-grid.js';

describe('sweep grid', () => {
  it('crosses the axes, the first axis varying slowest, over the base overrides', () => {
    const points = gridPoints({ 'agent.epsilon': [0, 0.5], 'env.size': [5, 7] }, { env: { noise: 1 } });
    expect(points.map((p) => p.point)).toEqual([
      { 'agent.epsilon': 0, 'env.size': 5 },
      { 'agent.epsilon': 0, 'env.size': 7 },
      { 'agent.epsilon': 0.5, 'env.size': 5 },
      { 'agent.epsilon': 0.5, 'env.size': 7 },
    ]);
    expect(points[3]!.overrides).toEqual({ env: { noise: 1, size: 7 }, agent: { epsilon: 0.5 } });
  });

  it('refuses an axis that is not node.key, an empty one, and a value given twice', () => {
    expect(() => parseGrid({ epsilon: [1] })).toThrow(/grid axis "epsilon": expected "node\.key"/);
    expect(() => parseGrid({ 'a.b': [] })).toThrow(/grid axis "a\.b": expected a non-empty array/);
    expect(() => parseGrid({ 'agent.epsilon': [0.1, 0.3, 0.1] })).toThrow(/grid axis "agent\.epsilon": the value 0\.1 is given twice/);
    expect(() => parseGrid({ 'agent.opts': [{ a: 1 }, { a: 1 }] })).toThrow(/the value \{"a":1\} is given twice/);
  });
});
