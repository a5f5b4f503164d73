import { describe, expect, it } from 'vitest';
import env from '../../../src/nodesets/env_gridnav/handlers.js';
import { computeMetrics } from '../../../src/nodesets/env_gridnav/metrics.js';
import { gridFromRows, shortestPath, type Cell } from '../../../src/nodesets/env_gridnav/grid.js';
import type { GridNavObservation } from '../../../src/nodesets/env_gridnav/observation.js';
import { drive } from '../drive.js';
import { routeAgent } from './route.js';

describe('computeMetrics (Habitat definitions)', () => {
  it('scores a stop on the goal along the shortest path as success 1, SPL 1', () => {
    expect(computeMetrics({ stopped: true, distanceToGoal: 0, shortestPathLength: 10, pathLength: 10, actions: 14 })).toEqual({
      success: 1,
      spl: 1,
      distance_to_goal: 0,
      steps: 14,
    });
  });

  it('weights success by shortest / taken after a detour', () => {
    expect(computeMetrics({ stopped: true, distanceToGoal: 0, shortestPathLength: 10, pathLength: 16, actions: 25 }).spl).toBe(10 / 16);
  });

  it('gives no success and no SPL without stop, or for a stop away from the goal', () => {
    expect(computeMetrics({ stopped: false, distanceToGoal: 0, shortestPathLength: 10, pathLength: 10, actions: 10 })).toMatchObject({
      success: 0,
      spl: 0,
    });
    expect(computeMetrics({ stopped: true, distanceToGoal: 3, shortestPathLength: 10, pathLength: 7, actions: 9 })).toMatchObject({
      success: 0,
      spl: 0,
      distance_to_goal: 3,
    });
  });

  it('accepts a stop within a larger success distance', () => {
    expect(
      computeMetrics({ stopped: true, distanceToGoal: 1, shortestPathLength: 8, pathLength: 7, actions: 9, successDistance: 1 }),
    ).toMatchObject({ success: 1, spl: 1 });
  });
});

describe('env_gridnav metrics through step', () => {
  const values = { dataset: 'standard', split: 'val', episode: 11 };

  async function firstObservation(): Promise<GridNavObservation> {
    const { steps } = await drive({ env, values, episodeKey: 'metrics:probe', agent: () => 'stop', budget: 1 });
    return steps[0]!.observation as GridNavObservation;
  }

  it('stops on the goal along the shortest path: success 1, SPL 1, steps = actions taken', async () => {
    const obs0 = await firstObservation();
    const path = shortestPath(gridFromRows(obs0.grid), obs0.position, obs0.goal);
    const run = await drive({ env, values, episodeKey: 'metrics:perfect', agent: routeAgent(path.slice(1)) });
    expect(run.last.done).toBe(true);
    expect(run.last.metrics).toEqual({ success: 1, spl: 1, distance_to_goal: 0, steps: run.actions.length });
    expect(run.actions[run.actions.length - 1]).toBe('stop');
  });

  it('stops on the goal after a detour: SPL = shortest / taken', async () => {
    const obs0 = await firstObservation();
    const path = shortestPath(gridFromRows(obs0.grid), obs0.position, obs0.goal);
    const shortest = path.length - 1;
    // One cell along the path, back to the start, then the whole path: two extra cells.
    const route: Cell[] = [path[1]!, path[0]!, ...path.slice(1)];
    const run = await drive({ env, values, episodeKey: 'metrics:detour', agent: routeAgent(route) });
    expect(run.last.metrics).toMatchObject({ success: 1, distance_to_goal: 0 });
    expect((run.last.metrics as { spl: number }).spl).toBe(shortest / (shortest + 2));
  });

  it('stops short of the goal: success 0, SPL 0, the geodesic distance left', async () => {
    const obs0 = await firstObservation();
    const path = shortestPath(gridFromRows(obs0.grid), obs0.position, obs0.goal);
    const run = await drive({ env, values, episodeKey: 'metrics:short', agent: routeAgent(path.slice(1, -3)) });
    expect(run.last.done).toBe(true);
    expect(run.last.metrics).toMatchObject({ success: 0, spl: 0, distance_to_goal: 3 });
  });

  it('does not count bumping into a wall as path length', async () => {
    const obs0 = await firstObservation();
    const grid = gridFromRows(obs0.grid);
    const path = shortestPath(grid, obs0.position, obs0.goal);
    const follow = routeAgent(path.slice(1));
    let bumpAt = -1;
    const agent = (o: unknown): string => {
      const obs = o as GridNavObservation;
      if (bumpAt < 0 && obs.free_ahead === 0) {
        bumpAt = obs.steps;
        return 'forward';
      }
      return follow(o);
    };
    const run = await drive({ env, values, episodeKey: 'metrics:bump', agent });
    expect(bumpAt).toBeGreaterThanOrEqual(0);
    const before = run.steps[bumpAt]!.observation as GridNavObservation;
    const after = run.steps[bumpAt + 1]!.observation as GridNavObservation;
    expect(after.position).toEqual(before.position);
    expect(run.last.metrics).toMatchObject({ success: 1, spl: 1, steps: run.actions.length });
  });

  it('emits the four metrics at every step, not only at the end', async () => {
    const run = await drive({ env, values, episodeKey: 'metrics:every', agent: () => 'turn_left', budget: 6 });
    expect(run.steps).toHaveLength(6);
    run.steps.forEach((out, i) => {
      expect(Object.keys(out.metrics as object).sort()).toEqual(['distance_to_goal', 'spl', 'steps', 'success']);
      expect((out.metrics as { steps: number }).steps).toBe(i);
      expect(out.done).toBe(false);
    });
  });
});
