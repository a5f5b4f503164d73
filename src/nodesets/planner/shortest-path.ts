/** The expert: follow a geodesic shortest path, turning the short way, and stop on the goal. */
import type { Action } from '../env_gridnav/actions.js';
import { HEADING_DELTAS, isFree, UNREACHABLE } from '../env_gridnav/grid.js';
import type { AgentView } from './observation.js';

export function shortestPathAction(view: AgentView): Action {
  const { maze, position, heading, goal } = view;
  if (position[0] === goal[0] && position[1] === goal[1]) return 'stop';
  const grid = maze.grid;
  const dist = maze.distancesTo(goal);
  const here = dist[position[0] * grid.cols + position[1]]!;
  if (here === UNREACHABLE) throw new Error(`the goal ${JSON.stringify(goal)} cannot be reached from ${JSON.stringify(position)}`);
  // Among neighbours one step closer, prefer straight ahead, then a quarter turn (right first), then turning around.
  let best: { turns: number; delta: number } | undefined;
  for (let h = 0; h < 4; h++) {
    const [dr, dc] = HEADING_DELTAS[h]!;
    const r = position[0] + dr;
    const c = position[1] + dc;
    if (!isFree(grid, r, c) || dist[r * grid.cols + c] !== here - 1) continue;
    const delta = (h - heading + 4) % 4;
    const turns = delta === 0 ? 0 : delta === 2 ? 2 : 1;
    if (!best || turns < best.turns || (turns === best.turns && delta === 1)) best = { turns, delta };
  }
  if (!best) throw new Error(`no neighbour of ${JSON.stringify(position)} is closer to the goal`);
  if (best.delta === 0) return 'forward';
  return best.delta === 3 ? 'turn_left' : 'turn_right';
}
