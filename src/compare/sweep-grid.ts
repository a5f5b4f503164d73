/**
 * A sweep's grid: `{"node.key": [values…]}` → every config point of the cross product, in
 * axis order (the first axis varies slowest), the first point being the baseline config.
 */
import { BadInputError } from '../errors.js';
import type { Overrides } from '../spec/run-spec.js';

/** Most runs one sweep may queue (configs × seeds). */
export const MAX_SWEEP_RUNS = 500;

export interface GridPoint {
  /** "node.key" → value. */
  point: Record<string, unknown>;
  /** `base` with the point applied. */
  overrides: Overrides;
}

const AXIS = /^([^.]+)\.(.+)$/;

/** Checks a grid; BAD_USER_INPUT naming the axis that is wrong. */
export function parseGrid(grid: unknown): Array<{ axis: string; node: string; key: string; values: unknown[] }> {
  if (grid === null || typeof grid !== 'object' || Array.isArray(grid))
    throw new BadInputError('grid must be an object of "node.key" → [values], e.g. {"agent.epsilon": [0.1, 0.3]}');
  const axes = Object.entries(grid as Record<string, unknown>).map(([axis, values]) => {
    const m = AXIS.exec(axis);
    if (!m) throw new BadInputError(`grid axis "${axis}": expected "node.key", e.g. "agent.epsilon"`);
    if (!Array.isArray(values) || values.length === 0) throw new BadInputError(`grid axis "${axis}": expected a non-empty array of values`);
    // A value given twice would queue the same config twice and count it twice in the comparison's correction.
    const seen = new Set<string>();
    for (const v of values) {
      const key = JSON.stringify(v);
      if (seen.has(key)) throw new BadInputError(`grid axis "${axis}": the value ${key} is given twice`);
      seen.add(key);
    }
    return { axis, node: m[1]!, key: m[2]!, values };
  });
  if (axes.length === 0) throw new BadInputError('grid needs at least one axis, e.g. {"agent.epsilon": [0.1, 0.3]}');
  return axes;
}

/** Every point of the grid over `base` overrides; the first one is the baseline. */
export function gridPoints(grid: unknown, base: Overrides = {}): GridPoint[] {
  const axes = parseGrid(grid);
  // Counted before the product is built: a few axes of a few values each make billions of points.
  const configs = axes.reduce((n, a) => n * a.values.length, 1);
  if (configs > MAX_SWEEP_RUNS) {
    throw new BadInputError(
      `the grid has ${configs} configs (${axes.map((a) => a.values.length).join(' × ')} values); a sweep queues at most ${MAX_SWEEP_RUNS} runs`,
    );
  }
  let points: GridPoint[] = [{ point: {}, overrides: base }];
  for (const a of axes) {
    points = points.flatMap((p) =>
      a.values.map((v) => ({
        point: { ...p.point, [a.axis]: v },
        overrides: { ...p.overrides, [a.node]: { ...(p.overrides[a.node] ?? {}), [a.key]: v } },
      })),
    );
  }
  return points;
}

/** "agent.epsilon=0.1 agent.k=2" */
export const pointLabel = (point: Record<string, unknown>): string =>
  Object.entries(point)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(' ');
