/**
 * Between- and within-episode variance of a metric measured on episodes played several times
 * (repeats), the one-way random-effects decomposition: a play's value is
 * episode effect (variance σ²_b) + play noise (variance σ²_w), so the mean over n episodes of
 * K plays each has Var = σ²_b/n + σ²_w/(n·K). Pure; groups are passed in episode order.
 */
import { largestMagnitude, meanOf } from './intervals.js';

export interface VarianceComponents {
  /** Episodes (groups with at least one value). */
  episodes: number;
  /** Values over all episodes. */
  plays: number;
  /** Mean plays per episode. */
  repeats: number;
  /** σ²_b: the variance of the episodes' true scores; null below two episodes. */
  between: number | null;
  /** σ²_w: the pooled variance of an episode's plays around its mean; null when no episode has two plays. */
  within: number | null;
}

/**
 * The components from one group of values per episode. σ²_w is the pooled within-group
 * variance Σ_i Σ_k (x_ik − x̄_i)² / Σ_i (K_i − 1); σ²_b = max(0, s²(x̄_i) − σ²_w · mean(1/K_i)),
 * since the sample variance of the episode means estimates σ²_b + σ²_w · mean(1/K_i) (the
 * method-of-moments estimator, exact for unequal K_i with unweighted means; clipped at 0).
 */
export function varianceComponents(groups: readonly (readonly number[])[]): VarianceComponents {
  const filled = groups.filter((g) => g.length > 0);
  const plain = plainComponents(filled);
  if (finiteOrNull(plain.between) && finiteOrNull(plain.within)) return plain;
  // As in meanAndSd: the sums of squares of values near the largest double overflow. A variance scales with the square of the values: compute the one that overflowed over the values divided by their largest magnitude, then multiply back twice. A component whose plain sum held keeps its bits (scaled by 1e154 or more, a small one would lose its digits to underflow).
  let scale = 0;
  for (const g of filled) scale = Math.max(scale, largestMagnitude(g));
  if (!(scale > 0 && Number.isFinite(scale))) return plain;
  const scaled = plainComponents(filled.map((g) => g.map((v) => v / scale)));
  const pick = (p: number | null, s: number | null): number | null =>
    p === null || s === null || Number.isFinite(p) ? p : s * scale * scale;
  return { ...plain, between: pick(plain.between, scaled.between), within: pick(plain.within, scaled.within) };
}

const finiteOrNull = (v: number | null): boolean => v === null || Number.isFinite(v);

function plainComponents(filled: readonly (readonly number[])[]): VarianceComponents {
  const n = filled.length;
  let plays = 0;
  let ss = 0;
  let dfWithin = 0;
  let invK = 0;
  const means: number[] = [];
  for (const g of filled) {
    const m = meanOf(g);
    for (const v of g) ss += (v - m) * (v - m);
    dfWithin += g.length - 1;
    plays += g.length;
    invK += 1 / g.length;
    means.push(m);
  }
  const within = dfWithin > 0 ? ss / dfWithin : null;
  let between: number | null = null;
  if (n >= 2) {
    const grand = meanOf(means);
    let sq = 0;
    for (const m of means) sq += (m - grand) * (m - grand);
    between = Math.max(0, sq / (n - 1) - (within ?? 0) * (invK / n));
  }
  return { episodes: n, plays, repeats: n > 0 ? plays / n : 0, between, within };
}

/**
 * Which shrinks the interval faster, doubling the episodes or doubling the repeats, from
 * Var(mean) = σ²_b/n + σ²_w/(n·K): doubling n halves it (SE × 0.71); doubling K halves only
 * the within part. At equal plays more episodes never lose; repeats are for when the episodes
 * run out (a fixed dataset) or setting an episode up costs more than playing it.
 */
export function repeatsAdvice(c: { repeats: number; between: number | null; within: number | null }): string | null {
  if (c.between === null || c.within === null || !(c.repeats > 0)) return null;
  let { between, within } = c;
  let now = between + within / c.repeats;
  if (!Number.isFinite(now)) {
    // Components near the largest double overflow their sum; the advice depends only on their ratio, so compare them divided by the larger. A component beyond a double's range (Infinity, as summary.json's null) gives no advice.
    const larger = Math.max(between, within);
    if (!Number.isFinite(larger)) return null;
    between /= larger;
    within /= larger;
    now = between + within / c.repeats;
  }
  if (!(now > 0)) return 'no variance between or within episodes: neither more episodes nor more repeats change the interval';
  const moreEpisodes = Math.SQRT1_2;
  const moreRepeats = Math.sqrt((between + within / (2 * c.repeats)) / now);
  const share = within / c.repeats / now;
  const verdict =
    moreRepeats - moreEpisodes < 0.005
      ? 'more episodes and more repeats shrink the bar alike (all of its variance is within episodes)'
      : 'more episodes shrink the bar faster than more repeats';
  return `${verdict}: ×2 episodes → SE ×${moreEpisodes.toFixed(2)}, ×2 repeats → SE ×${moreRepeats.toFixed(2)} (within-episode noise is ${Math.round(share * 100)} % of the mean's variance)`;
}
