/**
 * The `step_compute_ms` busy work: a heavy simulator's per-step CPU cost, stood in for by
 * recomputing the episode's geodesic distance map over and over. It is measured in this
 * process's CPU time, not the wall clock, so a host that has to share a core takes longer,
 * as a real CPU-bound simulator would. The work never changes anything an agent sees.
 */
import type { GridNavEpisode } from './episode.js';

/** Passes between two reads of the CPU clock (each read is a system call). */
const PASSES_PER_CHECK = 4;

const cpuMicros = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** Breadth-first distances from the goal into `dist`, using `queue`; allocates nothing. */
function distancesInto(ep: GridNavEpisode, dist: Int32Array, queue: Int32Array): void {
  const { rows, cols, walls } = ep.maze.grid;
  dist.fill(-1);
  const start = ep.maze.goal[0] * cols + ep.maze.goal[1];
  let head = 0;
  let tail = 0;
  dist[start] = 0;
  queue[tail++] = start;
  while (head < tail) {
    const i = queue[head++]!;
    const r = (i / cols) | 0;
    const c = i - r * cols;
    const d = dist[i]! + 1;
    if (r > 0 && walls[i - cols] === 0 && dist[i - cols] === -1) {
      dist[i - cols] = d;
      queue[tail++] = i - cols;
    }
    if (c < cols - 1 && walls[i + 1] === 0 && dist[i + 1] === -1) {
      dist[i + 1] = d;
      queue[tail++] = i + 1;
    }
    if (r < rows - 1 && walls[i + cols] === 0 && dist[i + cols] === -1) {
      dist[i + cols] = d;
      queue[tail++] = i + cols;
    }
    if (c > 0 && walls[i - 1] === 0 && dist[i - 1] === -1) {
      dist[i - 1] = d;
      queue[tail++] = i - 1;
    }
  }
}

/** Recomputes `ep`'s distance map until this process has spent `ms` more of CPU time; returns the passes made. */
export function computeFor(ep: GridNavEpisode, ms: number): number {
  if (!(ms > 0)) return 0;
  const until = cpuMicros() + ms * 1000;
  const n = ep.maze.grid.rows * ep.maze.grid.cols;
  const dist = new Int32Array(n);
  const queue = new Int32Array(n);
  const at = ep.maze.start[0] * ep.maze.grid.cols + ep.maze.start[1];
  let passes = 0;
  do {
    for (let k = 0; k < PASSES_PER_CHECK; k++) {
      distancesInto(ep, dist, queue);
      // Checked against the stored map so the work is never optimised away.
      if (dist[at] !== ep.goalDistances[at]) throw new Error('gridnav distance map changed while recomputing it');
      passes++;
    }
  } while (cpuMicros() < until);
  return passes;
}
