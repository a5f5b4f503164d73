/**
 * Newcombe's score interval for the difference of two paired proportions (his method 10,
 * "square and add" over the two Wilson intervals, with the pairs' correlation): unlike a t
 * interval over the 0/±1 differences it has width when every pair moved the same way (six of
 * six episodes gained a success reads [+0.45, +1], not [+1, +1]) and stays inside [−1, 1].
 */
import { wilsonInterval } from './intervals.js';

/** The paired 2×2 table of 0/1 outcomes, candidate against baseline. */
export interface PairedCounts {
  /** Both 1. */
  both: number;
  /** Candidate 1, baseline 0. */
  gained: number;
  /** Candidate 0, baseline 1. */
  lost: number;
  /** Both 0. */
  neither: number;
}

/** Counts the pairs of `baseline[i]`, `candidate[i]` (each 0 or 1). */
export function pairedCounts(baseline: readonly number[], candidate: readonly number[]): PairedCounts {
  const t: PairedCounts = { both: 0, gained: 0, lost: 0, neither: 0 };
  for (let i = 0; i < baseline.length; i++) {
    const b = baseline[i] === 1;
    const c = candidate[i] === 1;
    if (b && c) t.both++;
    else if (c) t.gained++;
    else if (b) t.lost++;
    else t.neither++;
  }
  return t;
}

/** 95 % interval of P(candidate = 1) − P(baseline = 1); null below one pair. */
export function newcombePairedInterval(t: PairedCounts): [number, number] | null {
  const n = t.both + t.gained + t.lost + t.neither;
  if (n < 1) return null;
  const candidateOnes = t.both + t.gained;
  const baselineOnes = t.both + t.lost;
  const p1 = candidateOnes / n;
  const p2 = baselineOnes / n;
  const [l1, u1] = wilsonInterval(candidateOnes, n);
  const [l2, u2] = wilsonInterval(baselineOnes, n);
  const phi = correlation(t, n, candidateOnes, baselineOnes);
  const diff = p1 - p2;
  const below = Math.sqrt(Math.max(0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2));
  const above = Math.sqrt(Math.max(0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2));
  return [Math.max(-1, diff - below), Math.min(1, diff + above)];
}

/**
 * The pairs' phi coefficient as the method takes it: a positive association shrunk by n/2 (to
 * none when it is smaller than that), a negative one as it is, 0 where a margin is empty.
 */
function correlation(t: PairedCounts, n: number, candidateOnes: number, baselineOnes: number): number {
  const margins = candidateOnes * (n - candidateOnes) * baselineOnes * (n - baselineOnes);
  if (margins === 0) return 0;
  const cross = t.both * t.neither - t.gained * t.lost;
  const shrunk = cross > n / 2 ? cross - n / 2 : Math.min(cross, 0);
  return shrunk / Math.sqrt(margins);
}
