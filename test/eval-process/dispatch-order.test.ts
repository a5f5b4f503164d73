import { describe, expect, it } from 'vitest';
import { createPrng } from '../../src/core/prng.js';
import { dispatchOrder, handOutMakespan } from '../../src/eval-process/dispatch-order.js';

/** The steps of the scaling benchmark's 64 gridnav episodes (index order): 21 to 154, one 139 and one 154. */
const BENCH_STEPS = [
  66, 97, 60, 27, 39, 36, 51, 51, 28, 40, 62, 55, 39, 65, 44, 45, 75, 40, 33, 49, 52, 40, 50, 139, 54, 30, 32, 29, 52, 75, 94, 39, 45, 39,
  25, 58, 47, 21, 79, 34, 63, 71, 53, 38, 67, 54, 27, 40, 27, 46, 30, 48, 154, 53, 27, 46, 78, 26, 54, 46, 42, 46, 60, 54,
];
const TOTAL = BENCH_STEPS.reduce((s, c) => s + c, 0);
const costliestFirst = BENCH_STEPS.map((_, i) => i).sort((a, b) => BENCH_STEPS[b]! - BENCH_STEPS[a]! || a - b);

describe('dispatchOrder', () => {
  it('hands every play out once', () => {
    for (const workers of [1, 2, 3, 8, 16, 64, 100]) {
      const order = dispatchOrder(BENCH_STEPS, workers);
      expect([...order].sort((a, b) => a - b)).toEqual(BENCH_STEPS.map((_, i) => i));
    }
  });

  it('ends the priced hand-out no later than costliest first, and at 8 workers within 1 % of the bound', () => {
    for (const workers of [2, 3, 8, 16]) {
      const balanced = handOutMakespan(dispatchOrder(BENCH_STEPS, workers), BENCH_STEPS, workers);
      expect(balanced).toBeLessThanOrEqual(handOutMakespan(costliestFirst, BENCH_STEPS, workers));
    }
    // Costliest first leaves the busiest of 8 workers 4 % over the mean (7.66× of 8); balanced, it is at the mean.
    expect(TOTAL / handOutMakespan(costliestFirst, BENCH_STEPS, 8)).toBeLessThan(7.7);
    expect(TOTAL / handOutMakespan(dispatchOrder(BENCH_STEPS, 8), BENCH_STEPS, 8)).toBeGreaterThan(7.9);
    expect(TOTAL / handOutMakespan(dispatchOrder(BENCH_STEPS, 16), BENCH_STEPS, 16)).toBeGreaterThan(15);
  });

  it('keeps costliest first with one worker or no more plays than workers', () => {
    expect(dispatchOrder(BENCH_STEPS, 1)).toEqual(costliestFirst);
    expect(dispatchOrder([3, 9, 1], 3)).toEqual([1, 0, 2]);
    expect(dispatchOrder([], 4)).toEqual([]);
  });

  it('still beats costliest first on average when the episodes run up to 8 % off their prices, workers starting up to 2 steps apart', () => {
    const prng = createPrng(11);
    for (const workers of [8, 16]) {
      const balanced = dispatchOrder(BENCH_STEPS, workers);
      let sumBalanced = 0;
      let sumCostliest = 0;
      for (let trial = 0; trial < 200; trial++) {
        const actual = BENCH_STEPS.map((c) => c * (1 + 0.08 * (2 * prng.next() - 1)));
        const starts = Array.from({ length: workers }, () => 2 * prng.next());
        const total = actual.reduce((s, c) => s + c, 0);
        sumBalanced += total / handOutMakespan(balanced, actual, workers, starts);
        sumCostliest += total / handOutMakespan(costliestFirst, actual, workers, starts);
      }
      expect(sumBalanced / 200, `${workers} workers`).toBeGreaterThan(sumCostliest / 200);
    }
  });

  it('depends on the prices and the worker count alone', () => {
    expect(dispatchOrder(BENCH_STEPS, 8)).toEqual(dispatchOrder([...BENCH_STEPS], 8));
    // Equal prices keep position order.
    expect(dispatchOrder([5, 5, 5, 5, 5], 2)).toEqual([0, 1, 2, 3, 4]);
  });
});
