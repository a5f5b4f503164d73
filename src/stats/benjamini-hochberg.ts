/**
 * Benjamini–Hochberg: many comparisons at once (metrics × candidates) keep the expected share
 * of false discoveries at or below `q`.
 */

export interface BhResult {
  /** BH-adjusted p per input (the smallest q at which it would be flagged), input order. */
  adjusted: number[];
  /** Flagged at level q, input order. */
  significant: boolean[];
}

/** Adjusted p-values and flags; a null p (nothing to test) stays unflagged with adjusted null-as-NaN. */
export function benjaminiHochberg(pValues: readonly (number | null)[], q = 0.05): BhResult {
  const tested = pValues.flatMap((p, i) => (p === null || Number.isNaN(p) ? [] : [{ p, i }]));
  const m = tested.length;
  // Stable order by p, ties by position, so the result never depends on sort internals.
  tested.sort((x, y) => x.p - y.p || x.i - y.i);
  const adjusted = pValues.map(() => Number.NaN);
  let running = 1;
  for (let r = m - 1; r >= 0; r--) {
    const { p, i } = tested[r]!;
    running = Math.min(running, (p * m) / (r + 1));
    adjusted[i] = running;
  }
  return { adjusted, significant: adjusted.map((a) => !Number.isNaN(a) && a <= q) };
}
