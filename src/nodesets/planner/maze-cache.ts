/**
 * mazeOf: the planner's mazes by their grid text. An episode shows the same maze at every step,
 * so its parsed grid and its distances to the goal are worked out once per episode, not once per
 * step (they were a tenth of a light step's CPU). Bounded, least recently used first out: a
 * shared planner serves every worker's episode at once.
 */
import { distanceMap, gridFromRows, type Cell, type Grid } from '../env_gridnav/grid.js';

/** Mazes kept: more than the episodes a shared planner serves at once (one per worker). */
export const MAZE_CACHE_SIZE = 64;

export interface Maze {
  readonly grid: Grid;
  /** Geodesic distance from every cell to `goal` (distanceMap), computed on first use. */
  distancesTo(goal: Cell): Int32Array;
}

type Rows = ReadonlyArray<string | ReadonlyArray<number>>;

const mazes = new Map<string, Maze>();

function keyOf(rows: Rows): string {
  return rows.every((row) => typeof row === 'string') ? rows.join('\n') : JSON.stringify(rows);
}

function newMaze(grid: Grid): Maze {
  const byGoal = new Map<number, Int32Array>();
  return {
    grid,
    distancesTo(goal) {
      // Out-of-grid goals get no index of their own: distanceMap answers them with an all-unreachable map.
      const at = goal[0] >= 0 && goal[0] < grid.rows && goal[1] >= 0 && goal[1] < grid.cols ? goal[0] * grid.cols + goal[1] : -1;
      let dist = byGoal.get(at);
      if (!dist) {
        dist = distanceMap(grid, goal);
        byGoal.set(at, dist);
      }
      return dist;
    },
  };
}

/** The maze `rows` draw (gridFromRows: throws naming a bad row), from the cache when seen lately. */
export function mazeOf(rows: Rows): Maze {
  const key = keyOf(rows);
  let maze = mazes.get(key);
  if (maze) {
    mazes.delete(key);
  } else {
    maze = newMaze(gridFromRows(rows));
    if (mazes.size >= MAZE_CACHE_SIZE) mazes.delete(mazes.keys().next().value!);
  }
  mazes.set(key, maze);
  return maze;
}
