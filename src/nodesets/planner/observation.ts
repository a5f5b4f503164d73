/** Reads the parts of a gridnav observation the agents need, naming the field that is wrong. */
import type { Cell, Heading } from '../env_gridnav/grid.js';
import { mazeOf, type Maze } from './maze-cache.js';

export interface AgentView {
  /** The observation's grid, parsed, with its distance maps (shared: read only). */
  maze: Maze;
  position: Cell;
  heading: Heading;
  goal: Cell;
  steps: number;
  stepBudget: number;
}

function cell(v: unknown, name: string): Cell {
  if (!Array.isArray(v) || v.length !== 2 || !v.every((x) => Number.isInteger(x))) {
    throw new Error(`observation.${name} must be [row, col], got ${JSON.stringify(v)}`);
  }
  return [v[0] as number, v[1] as number];
}

export function readObservation(obs: unknown): AgentView {
  if (typeof obs !== 'object' || obs === null)
    throw new Error(`observation must be a gridnav observation object, got ${JSON.stringify(obs)}`);
  const o = obs as Record<string, unknown>;
  if (!Array.isArray(o.grid)) throw new Error('observation.grid must be an array of rows');
  const heading = o.heading;
  if (heading !== 0 && heading !== 1 && heading !== 2 && heading !== 3) {
    throw new Error(`observation.heading must be 0, 1, 2 or 3, got ${JSON.stringify(heading)}`);
  }
  const steps = typeof o.steps === 'number' ? o.steps : 0;
  const stepBudget = typeof o.step_budget === 'number' ? o.step_budget : Number.POSITIVE_INFINITY;
  return {
    maze: mazeOf(o.grid as Array<string | number[]>),
    position: cell(o.position, 'position'),
    heading,
    goal: cell(o.goal, 'goal'),
    steps,
    stepBudget,
  };
}
