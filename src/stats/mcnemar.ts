/**
 * McNemar's exact test for paired 0/1 outcomes: a two-sided binomial test on the discordant
 * pairs (under no difference each discordant pair goes either way with probability ½); and its
 * cluster-adjusted form for pairs that come in clusters.
 */
import { binomialCdfOf, zTwoSidedP } from './distributions.js';

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

/**
 * Durkalski's cluster-adjusted McNemar test (Durkalski, Palesch, Lipsitz & Rust, Statistics in
 * Medicine 22:2417–2428, 2003): with b_k and c_k the discordant pairs of cluster k and n_k its
 * pairs, X² = (Σ_k (b_k − c_k)/n_k)² / Σ_k ((b_k − c_k)/n_k)², referred to χ² with 1 df (as
 * clust.bin.pair's durkalski.test computes it). It reduces to McNemar's (b − c)²/(b + c) when
 * every cluster holds one pair. `clusters[i]` names pair i's cluster (clusters summed in
 * first-seen order); 1 when no pair is discordant.
 */
export function durkalskiP(baseline: readonly number[], candidate: readonly number[], clusters: readonly string[]): number {
  const net = new Map<string, { d: number; n: number }>();
  for (let i = 0; i < baseline.length; i++) {
    const c = net.get(clusters[i]!) ?? { d: 0, n: 0 };
    c.d += candidate[i]! - baseline[i]!;
    c.n += 1;
    net.set(clusters[i]!, c);
  }
  let sum = 0;
  let sq = 0;
  for (const { d, n } of net.values()) {
    sum += d / n;
    sq += (d / n) * (d / n);
  }
  if (sq === 0) return 1;
  return zTwoSidedP(sum / Math.sqrt(sq));
}
