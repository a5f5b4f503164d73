/**
 * dispatchOrder: the order a run hands out its priced plays in. Workers take the next play as
 * they free up, so the order alone decides how the work falls on them and when the last one
 * ends. Costliest first (the classic LPT rule) starts the long episodes early, but its tail can
 * still leave one worker a few percent of the run's work after the others are done (4 % for the
 * 64 gridnav episodes of the scaling benchmark at 8 workers). A short, seeded search then swaps
 * pairs of positions and keeps a swap only when the hand-out, replayed on the prices, ends
 * strictly earlier; it stops at the lower bound (the total over the workers, or the costliest
 * play) or when its work budget is spent. Only the order changes: a play's seed and its place
 * in the records come from its index.
 */
import { createPrng } from '../core/prng.js';

/** Replays of the hand-out are stopped once about this many (play × worker) steps are spent (~10 ms). */
const SEARCH_BUDGET = 2_000_000;
/** At most this many swaps are tried, however small the run. */
const MAX_SWAPS = 1000;
/** The search's own seed: the order depends on the prices and the worker count alone. */
const SEARCH_SEED = 0x64697370;

/**
 * When the last of `workers` workers finishes, each taking the next play of `order` as soon as
 * it is free (ties to the lowest worker), playing each in its price; `starts`: when each worker
 * is first free (default all at 0).
 */
export function handOutMakespan(order: readonly number[], costs: readonly number[], workers: number, starts?: readonly number[]): number {
  const free = new Float64Array(Math.max(1, workers));
  if (starts) free.set(starts.slice(0, free.length));
  for (const at of order) {
    let w = 0;
    for (let k = 1; k < free.length; k++) if (free[k]! < free[w]!) w = k;
    free[w]! += costs[at]!;
  }
  let end = 0;
  for (const t of free) end = Math.max(end, t);
  return end;
}

/**
 * Positions into `costs` (finite, ≥ 0), in the order to hand them out to `workers` workers:
 * costliest first (ties keep position order), improved by the swap search above.
 */
export function dispatchOrder(costs: readonly number[], workers: number): number[] {
  const order = costs.map((_, i) => i).sort((a, b) => costs[b]! - costs[a]! || a - b);
  const n = order.length;
  if (workers <= 1 || n <= workers) return order;
  let total = 0;
  for (const c of costs) total += c;
  const bound = Math.max(costs[order[0]!]!, total / workers) * (1 + 1e-9);
  let best = handOutMakespan(order, costs, workers);
  const swaps = Math.min(MAX_SWAPS, Math.floor(SEARCH_BUDGET / (n * workers)));
  const prng = createPrng(SEARCH_SEED, n, workers);
  for (let s = 0; s < swaps && best > bound; s++) {
    const i = prng.int(n);
    const j = prng.int(n);
    if (costs[order[i]!] === costs[order[j]!]) continue;
    [order[i], order[j]] = [order[j]!, order[i]!];
    const end = handOutMakespan(order, costs, workers);
    if (end < best) best = end;
    else [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}
