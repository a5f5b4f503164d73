/**
 * Repeats: a run of episodeCount N and repeats K plays each episode K times, as N × K plays
 * with plain run indices r = i × K + k (episode i, repeat k). Dispatch, shards, merge and
 * export all walk these indices, so they need no notion of repeats; only the runner maps a
 * play back to its episode and seed.
 */
import { deriveSeed } from '../core/prng.js';

type RepeatFields = { episodeCount: number; repeats?: number | undefined };

/** Plays of each episode (1 when the spec names none). */
export const repeatsOf = (spec: { repeats?: number | undefined }): number => spec.repeats ?? 1;

/** Records the run has: episodeCount × repeats. */
export const playCountOf = (spec: RepeatFields): number => spec.episodeCount * repeatsOf(spec);

/** The episode (0-based, before episodeOffset) and repeat of play `r`. */
export function playOf(spec: { repeats?: number | undefined }, r: number): { episode: number; repeat: number } {
  const k = repeatsOf(spec);
  return { episode: Math.floor(r / k), repeat: r % k };
}

/**
 * The seed of repeat `repeat` of env episode `envEpisode`. Repeat 0 keeps the seed a run
 * without repeats gives the episode (so K = 1 runs are unchanged and repeat 0 of any run pairs
 * exactly with a plain run); repeat k > 0 derives again from that seed and k.
 */
export function playSeed(runSeed: number, envEpisode: number, repeat: number): number {
  const base = deriveSeed(runSeed, envEpisode);
  return repeat === 0 ? base : deriveSeed(base, repeat);
}
