/**
 * Splits episodes over workers the way numpy's `array_split` does: contiguous chunks, the
 * first `n % k` chunks one longer. The split depends only on (n, k), never on timing.
 */

/** Chunk sizes for `n` items over `k` chunks. */
export function arraySplitSizes(n: number, k: number): number[] {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`item count must be a non-negative integer, got ${n}`);
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`chunk count must be a positive integer, got ${k}`);
  const base = Math.floor(n / k);
  const extra = n % k;
  return Array.from({ length: k }, (_, i) => base + (i < extra ? 1 : 0));
}

/** `items` cut into `k` contiguous chunks with array_split sizes (some may be empty when k > n). */
export function partitionContiguous<T>(items: readonly T[], k: number): T[][] {
  const chunks: T[][] = [];
  let start = 0;
  for (const size of arraySplitSizes(items.length, k)) {
    chunks.push(items.slice(start, start + size));
    start += size;
  }
  return chunks;
}
