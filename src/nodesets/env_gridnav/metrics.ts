/** Navigation metrics as Habitat defines them (success, SPL, geodesic distance to goal, steps). */

export interface GridNavMetrics {
  /** 1 when the agent called stop within the success distance of the goal, else 0. */
  success: number;
  /** success × shortest / max(shortest, taken): 1 for a perfect run, lower for detours, 0 on failure. */
  spl: number;
  /** Geodesic (BFS) distance in cells from the agent to the goal. */
  distance_to_goal: number;
  /** Actions taken, stop included. */
  steps: number;
}

export interface MetricInputs {
  stopped: boolean;
  distanceToGoal: number;
  /** Geodesic start-to-goal distance in cells. */
  shortestPathLength: number;
  /** Cells actually moved (forward moves that were not blocked). */
  pathLength: number;
  actions: number;
  /** @default 0 (on the goal cell) */
  successDistance?: number;
}

export function computeMetrics(m: MetricInputs): GridNavMetrics {
  const success = m.stopped && m.distanceToGoal <= (m.successDistance ?? 0) ? 1 : 0;
  const denom = Math.max(m.shortestPathLength, m.pathLength);
  const spl = success === 1 && denom > 0 ? m.shortestPathLength / denom : success;
  return { success, spl, distance_to_goal: m.distanceToGoal, steps: m.actions };
}
