/**
 * Power planning from a standard deviation (of paired differences, or of one run's scores):
 * the minimum detectable effect at n, and the n that detects a given effect, for a two-sided
 * test at level alpha with the given power (normal approximation, as in Miller 2024 §5).
 */
import { zOf } from './distributions.js';

export const DEFAULT_ALPHA = 0.05;
export const DEFAULT_POWER = 0.8;

const multiplier = (alpha: number, power: number) => zOf(1 - alpha / 2) + zOf(power);

/** Smallest true effect detected with `power` at level `alpha` by n episodes of spread sd. */
export function minimumDetectableEffect(sd: number, n: number, alpha = DEFAULT_ALPHA, power = DEFAULT_POWER): number {
  const z = multiplier(alpha, power);
  const mde = (z * sd) / Math.sqrt(n);
  // A spread near the largest double overflows z · sd before the division brings it back: divide first (only then, so ordinary values keep their exact bits).
  return Number.isFinite(mde) || !Number.isFinite(sd) ? mde : z * (sd / Math.sqrt(n));
}

/** Fewest episodes any test can use: one more than none to estimate a spread from. */
export const MIN_EPISODES_FOR_TEST = 2;

/**
 * Episodes needed to detect `effect` (≠ 0) with `power` at level `alpha`, rounded up; never
 * under 2 (a spread of 0, where the formula says 0, still needs two episodes to be seen as one).
 */
export function episodesForEffect(sd: number, effect: number, alpha = DEFAULT_ALPHA, power = DEFAULT_POWER): number {
  const z = multiplier(alpha, power);
  let ratio = (z * sd) / Math.abs(effect);
  // As in minimumDetectableEffect: z · sd may overflow where the ratio does not.
  if (!Number.isFinite(ratio) && Number.isFinite(sd)) ratio = z * (sd / Math.abs(effect));
  return Math.max(MIN_EPISODES_FOR_TEST, Math.ceil(ratio ** 2));
}
