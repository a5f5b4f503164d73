/**
 * One gridnav episode: the maze, where the agent is, the way it came, and the budget the
 * env publishes for it.
 */
import type { Action } from './actions.js';
import type { EpisodeAddress } from '../_lib/episode-address.js';
import { episodePrng, DATASETS } from './datasets.js';
import {
  distanceMap,
  gridToStrings,
  HEADING_DELTAS,
  isFree,
  optimalActionCount,
  turnLeft,
  turnRight,
  type Cell,
  type Heading,
} from './grid.js';
import { generateMaze, type Maze } from './maze.js';
import { computeMetrics, type GridNavMetrics } from './metrics.js';

export interface GridNavEpisode {
  address: EpisodeAddress;
  maze: Maze;
  /** The maze as rows of `#` (wall) and `.` (free), computed once. */
  rows: string[];
  /** Geodesic distance of every cell to the goal. */
  goalDistances: Int32Array;
  shortestPathLength: number;
  /** Fewest actions (turns, moves and the final stop) that solve the episode. */
  optimalActions: number;
  /** Graph iterations the env grants: iteration 0 only observes, each later one applies one action. */
  stepBudget: number;
  position: Cell;
  heading: Heading;
  /** Cells visited, the start first; one entry per successful forward move after it. */
  trajectory: Cell[];
  actions: number;
  collisions: number;
  stopped: boolean;
}

/** Action budget = this × the optimal action count + ACTION_MARGIN. */
const BUDGET_FACTOR = 2;
const ACTION_MARGIN = 10;

/** The fewest actions that solve the episode, without the rest of its state (a run prices every episode before it starts). */
export function fewestActions(address: EpisodeAddress): number {
  const maze = generateMaze(episodePrng(address), DATASETS[address.dataset]!);
  return optimalActionCount(maze.grid, maze.start, maze.startHeading, maze.goal);
}

export function createEpisode(address: EpisodeAddress): GridNavEpisode {
  const maze = generateMaze(episodePrng(address), DATASETS[address.dataset]!);
  const goalDistances = distanceMap(maze.grid, maze.goal);
  const optimalActions = optimalActionCount(maze.grid, maze.start, maze.startHeading, maze.goal);
  return {
    address,
    maze,
    rows: gridToStrings(maze.grid),
    goalDistances,
    shortestPathLength: goalDistances[maze.start[0] * maze.grid.cols + maze.start[1]]!,
    optimalActions,
    stepBudget: BUDGET_FACTOR * optimalActions + ACTION_MARGIN + 1,
    position: maze.start,
    heading: maze.startHeading,
    trajectory: [maze.start],
    actions: 0,
    collisions: 0,
    stopped: false,
  };
}

export function applyAction(ep: GridNavEpisode, action: Action): void {
  if (ep.stopped) throw new Error(`gridnav episode ${ep.address.dataset}/${ep.address.split}/${ep.address.index} already ended with stop`);
  ep.actions++;
  switch (action) {
    case 'stop':
      ep.stopped = true;
      return;
    case 'turn_left':
      ep.heading = turnLeft(ep.heading);
      return;
    case 'turn_right':
      ep.heading = turnRight(ep.heading);
      return;
    case 'forward': {
      const [dr, dc] = HEADING_DELTAS[ep.heading]!;
      const next: Cell = [ep.position[0] + dr, ep.position[1] + dc];
      if (!isFree(ep.maze.grid, next[0], next[1])) {
        ep.collisions++;
        return;
      }
      ep.position = next;
      ep.trajectory.push(next);
    }
  }
}

export function distanceToGoal(ep: GridNavEpisode): number {
  return ep.goalDistances[ep.position[0] * ep.maze.grid.cols + ep.position[1]]!;
}

export function episodeMetrics(ep: GridNavEpisode, successDistance = 0): GridNavMetrics {
  return computeMetrics({
    stopped: ep.stopped,
    distanceToGoal: distanceToGoal(ep),
    shortestPathLength: ep.shortestPathLength,
    pathLength: ep.trajectory.length - 1,
    actions: ep.actions,
    successDistance,
  });
}
