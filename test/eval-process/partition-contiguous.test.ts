import { describe, expect, it } from 'vitest';
import { arraySplitSizes, partitionContiguous } from '../../src/eval-process/partition-contiguous.js';

describe('partitionContiguous', () => {
  it('uses numpy array_split sizes: the first n % k chunks get one more', () => {
    expect(arraySplitSizes(10, 3)).toEqual([4, 3, 3]);
    expect(arraySplitSizes(40, 8)).toEqual([5, 5, 5, 5, 5, 5, 5, 5]);
    expect(arraySplitSizes(11, 4)).toEqual([3, 3, 3, 2]);
    expect(arraySplitSizes(2, 4)).toEqual([1, 1, 0, 0]);
    expect(arraySplitSizes(0, 2)).toEqual([0, 0]);
  });

  it('keeps chunks contiguous and covers every item once', () => {
    const items = Array.from({ length: 13 }, (_, i) => i);
    const chunks = partitionContiguous(items, 5);
    expect(chunks).toEqual([
      [0, 1, 2],
      [3, 4, 5],
      [6, 7, 8],
      [9, 10],
      [11, 12],
    ]);
    expect(chunks.flat()).toEqual(items);
  });

  it('refuses a worker count below 1', () => {
    expect(() => arraySplitSizes(3, 0)).toThrow(/positive integer, got 0/);
  });
});
