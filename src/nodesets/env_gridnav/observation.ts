/** What an agent sees of a gridnav episode after each step. */
import { distanceToGoal, type GridNavEpisode } from './episode.js';
import { HEADING_DELTAS, HEADING_NAMES, isFree, turnLeft, type Cell, type Heading } from './grid.js';

export interface GridNavObservation {
  /** The whole maze: rows of `#` (wall) and `.` (free). */
  grid: string[];
  /** `[row, col]`, row 0 at the top. */
  position: Cell;
  /** 0 north (row − 1), 1 east, 2 south, 3 west. */
  heading: Heading;
  heading_name: (typeof HEADING_NAMES)[number];
  goal: Cell;
  /** Habitat's PointGoal with GPS+compass: `[distance, angle]` to the goal in the agent's frame (radians, positive to the left). */
  pointgoal: [number, number];
  /** Free cells straight ahead before the first wall: a one-ray depth sensor. */
  free_ahead: number;
  /** Actions taken so far. */
  steps: number;
  /** Graph iterations the env grants this episode (iteration 0 only observes). */
  step_budget: number;
  /** Geodesic distance to the goal, as in the metrics. */
  distance_to_goal: number;
}

export function observe(ep: GridNavEpisode): GridNavObservation {
  const [r, c] = ep.position;
  const [gr, gc] = ep.maze.goal;
  const [fr, fc] = HEADING_DELTAS[ep.heading]!;
  const [lr, lc] = HEADING_DELTAS[turnLeft(ep.heading)]!;
  const forward = (gr - r) * fr + (gc - c) * fc;
  const left = (gr - r) * lr + (gc - c) * lc;
  let freeAhead = 0;
  while (isFree(ep.maze.grid, r + fr * (freeAhead + 1), c + fc * (freeAhead + 1))) freeAhead++;
  return {
    grid: ep.rows,
    position: [r, c],
    heading: ep.heading,
    heading_name: HEADING_NAMES[ep.heading],
    goal: [gr, gc],
    pointgoal: [Math.sqrt(forward * forward + left * left), Math.atan2(left, forward)],
    free_ahead: freeAhead,
    steps: ep.actions,
    step_budget: ep.stepBudget,
    distance_to_goal: distanceToGoal(ep),
  };
}
