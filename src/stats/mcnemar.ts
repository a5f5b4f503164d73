/**
 * McNemar's exact test for paired 0/1 outcomes: a two-sided binomial test on the discordant
 * pairs (under no difference each discordant pair goes either way with probability ½).
 */
import { binomialCdfOf } from './distributions.js';

export interface WinTieLoss {
  /** Candidate 1, baseline 0. */
  wins: number;
  /** Both equal. */
  ties: number;
  /** Candidate 0, baseline 1. */
  losses: number;
}

export function winTieLoss(baseline: readonly number[], candidate: readonly number[]): WinTieLoss {
  let wins = 0;
  let ties = 0;
  let losses = 0;
  for (let i = 0; i < baseline.length; i++) {
    const d = candidate[i]! - baseline[i]!;
    if (d > 0) wins++;
    else if (d < 0) losses++;
    else ties++;
  }
  return { wins, ties, losses };
}

/** Two-sided exact p from the discordant counts `b` and `c`; 1 when there are none. */
export function mcnemarExactP(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  return Math.min(1, 2 * binomialCdfOf(Math.min(b, c), n, 0.5));
}
