/**
 * The `step_compute_ms` busy work: a heavy simulator's per-step CPU cost, stood in for by
 * recomputing the episode's geodesic distance map over and over. It is measured in this
 * thread's CPU time, not the wall clock, so a host that has to share a core takes longer,
 * as a real CPU-bound simulator would. The work never changes anything an agent sees.
 */
import { openSync, readSync } from 'node:fs';
import type { GridNavEpisode } from './episode.js';

/** Cells visited between two reads of the CPU clock (a read is a system call of a few µs; a whole pass of a large maze takes milliseconds, and checking only between passes overshot a 10 ms budget by ~2 ms). */
const CELLS_PER_CHECK = 1024;

/** `process.threadCpuUsage` (Node ≥ 23.9, and the Node 22 releases tested here): this thread's CPU time, where the runtime has it. */
const threadCpuUsage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.bind(process);
/** This thread's `/proc/thread-self/schedstat` (Linux; its first field is the thread's CPU time in ns), opened on first use. */
let schedstat: number | null | undefined;
const schedBuf = Buffer.alloc(64);
/** A gap between two reads longer than this (µs) is a time the thread was not running (preempted), and is not counted. */
const MAX_RUNNING_GAP_US = 1000;

/** The thread's CPU time from schedstat, µs, or undefined where it cannot be read. */
function schedstatMicros(): number | undefined {
  if (schedstat === undefined) {
    try {
      schedstat = openSync('/proc/thread-self/schedstat', 'r');
    } catch {
      schedstat = null;
    }
  }
  if (schedstat === null) return undefined;
  const n = readSync(schedstat, schedBuf, 0, schedBuf.length, 0);
  const ns = Number.parseInt(schedBuf.toString('latin1', 0, n), 10);
  return Number.isFinite(ns) ? ns / 1000 : undefined;
}

/** The calling thread's CPU time as the kernel last booked it, µs, or undefined where neither source exists. */
function threadMicros(): number | undefined {
  if (threadCpuUsage) {
    const u = threadCpuUsage();
    return u.user + u.system;
  }
  return schedstatMicros();
}

/**
 * A clock over `raw`, a CPU-time source that only advances when the kernel books the thread's
 * time (at scheduler ticks, 1–4 ms apart here: read alone it overshot a 10 ms budget by 1–2 ms).
 * Between two advances the wall time between close reads (the thread computing) is added, and a
 * longer gap (the thread preempted by others) is not. µs in, µs out.
 */
export function interpolatedCpuClock(raw: () => number | undefined, wallMicros: () => number): () => number | undefined {
  let lastRaw = -1;
  let sinceRaw = 0;
  let lastReadAt = Number.NEGATIVE_INFINITY;
  return () => {
    const value = raw();
    if (value === undefined) return undefined;
    const now = wallMicros();
    const gap = now - lastReadAt;
    lastReadAt = now;
    if (value !== lastRaw) {
      lastRaw = value;
      sinceRaw = 0;
      return value;
    }
    if (gap < MAX_RUNNING_GAP_US) sinceRaw += gap;
    return value + sinceRaw;
  };
}

const threadClock = interpolatedCpuClock(threadMicros, () => performance.now() * 1000);

/**
 * CPU time of the calling thread, µs: a host served in a worker thread shares its process with
 * other hosts, and their CPU must not count as its own. Falls back to the process's CPU time.
 */
function cpuMicros(): number {
  const t = threadClock();
  if (t !== undefined) return t;
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Breadth-first distances from the goal into `dist`, using `queue`; allocates nothing. False when the CPU clock passed `until` first (the map is then partial). */
function distancesInto(ep: GridNavEpisode, dist: Int32Array, queue: Int32Array, until: number): boolean {
  const { rows, cols, walls } = ep.maze.grid;
  dist.fill(-1);
  const start = ep.maze.goal[0] * cols + ep.maze.goal[1];
  let head = 0;
  let tail = 0;
  dist[start] = 0;
  queue[tail++] = start;
  while (head < tail) {
    if (head % CELLS_PER_CHECK === 0 && head > 0 && cpuMicros() >= until) return false;
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
  return true;
}

/** The distance map and queue computeFor works in, reused: a simulator does not allocate per step, and ~80 KB of fresh buffers a step kept V8's helper threads collecting them (~5 % of a 2-core machine at 2 CPU-bound workers). */
let scratch = { dist: new Int32Array(0), queue: new Int32Array(0) };

/** Views of `n` cells over the reused buffers, grown when a larger maze comes. computeFor runs to the end without yielding, so one pair serves every host on this thread. */
function scratchFor(n: number): { dist: Int32Array; queue: Int32Array } {
  if (scratch.dist.length < n) scratch = { dist: new Int32Array(n), queue: new Int32Array(n) };
  return { dist: scratch.dist.subarray(0, n), queue: scratch.queue.subarray(0, n) };
}

/** CPU time of work between two reads of the clock in `computeFor`, µs: about 1 % of a 10 ms budget of overshoot at most. */
const READ_EVERY_US = 100;

/**
 * Recomputes `ep`'s distance map until this thread has spent `ms` more of CPU time; returns the
 * passes made. A pass over a small maze takes a few µs and a read of the clock (a system call)
 * longer, so the clock is read about every 100 µs of work, not after every pass: reading it
 * after each one made the reads most of the "work", which is not what a simulator's CPU cost is.
 */
export function computeFor(ep: GridNavEpisode, ms: number): number {
  if (!(ms > 0)) return 0;
  let last = cpuMicros();
  const until = last + ms * 1000;
  const { dist, queue } = scratchFor(ep.maze.grid.rows * ep.maze.grid.cols);
  const at = ep.maze.start[0] * ep.maze.grid.cols + ep.maze.start[1];
  let passes = 0;
  let between = 1;
  for (;;) {
    for (let k = 0; k < between; k++) {
      if (!distancesInto(ep, dist, queue, until)) return passes;
      // Checked against the stored map so the work is never optimised away.
      if (dist[at] !== ep.goalDistances[at]) throw new Error('gridnav distance map changed while recomputing it');
      passes++;
    }
    const now = cpuMicros();
    if (now >= until) return passes;
    const perPass = (now - last) / between;
    last = now;
    // As many passes as take READ_EVERY_US, and never past what is left of the budget.
    between = perPass > 0 ? Math.max(1, Math.floor(Math.min(READ_EVERY_US, until - now) / perPass)) : between;
  }
}
