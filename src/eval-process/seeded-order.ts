/**
 * seededOrder: the hand-out order of a run that may stop early (stopWhen). Its prefixes must be
 * fair samples of the plan, so the episodes go out in a permutation seeded by the run seed, not
 * costliest first nor in index order (which could put every hard episode of a dataset at the end).
 * Only the order changes: a play's seed and its place in the records come from its index.
 */
import { createPrng } from '../core/prng.js';

/** The permutation's own stream, apart from every episode's. */
const ORDER_STREAM = 0x73746f70;

/** `plays` (a count, or the run indices in index order) shuffled by Fisher–Yates on a PRNG seeded by `seed`. */
export function seededOrder(plays: number | readonly number[], seed: number): number[] {
  const order = typeof plays === 'number' ? Array.from({ length: plays }, (_, i) => i) : [...plays];
  const prng = createPrng(seed, ORDER_STREAM, order.length);
  for (let i = order.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}
