/**
 * The `step_compute_ms` busy work: a heavy simulator's per-step CPU cost, stood in for by
 * recomputing the episode's geodesic distance map over and over. It is measured in this
 * process's CPU time, not the wall clock, so a host that has to share a core takes longer,
 * as a real CPU-bound simulator would. The work never changes anything an agent sees.
 */
import type { GridNavEpisode } from './episode.js';
import { distanceMap } from './grid.js';

const cpuMicros = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** Recomputes `ep`'s distance map until this process has spent `ms` more of CPU time; returns the passes made. */
export function computeFor(ep: GridNavEpisode, ms: number): number {
  if (!(ms > 0)) return 0;
  const until = cpuMicros() + ms * 1000;
  const { grid, start } = ep.maze;
  const at = start[0] * grid.cols + start[1];
  let passes = 0;
  do {
    // Checked against the stored map so the work is never optimised away.
    if (distanceMap(grid, ep.maze.goal)[at] !== ep.goalDistances[at]) throw new Error('gridnav distance map changed while recomputing it');
    passes++;
  } while (cpuMicros() < until);
  return passes;
}
