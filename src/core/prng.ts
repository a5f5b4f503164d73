/**
 * The one source of randomness in anything that affects results. Integer operations only
 * (Math.imul, shifts, xor), so a seed gives the same sequence on every platform.
 */
import { BadInputError } from '../errors.js';

export interface Prng {
  /** Uniform in [0, 1), 32 bits of resolution. */
  next(): number;
  /** Uniform unsigned 32-bit integer. */
  uint32(): number;
  /** Uniform integer in [0, n), without modulo bias. `n` is a positive integer ≤ 2^32. */
  int(n: number): number;
  /** Normally distributed (Marsaglia's polar method). @default mean 0, std 1 */
  normal(mean?: number, std?: number): number;
  /** A uniformly chosen element of a non-empty array. */
  pick<T>(arr: readonly T[]): T;
}

const TWO_32 = 0x1_0000_0000;
const GOLDEN = 0x9e3779b9;

/** A strong 32-bit finaliser (low-bias integer hash); every input bit affects every output bit. */
function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Folds one 32-bit word into a running hash. */
function combine(h: number, v: number): number {
  return mix32((h ^ mix32((v + GOLDEN) >>> 0)) + 0x632be5ab);
}

/** Low and high 32-bit words of a safe integer's 64-bit two's-complement form. */
function words(n: number): [number, number] {
  const lo = n >>> 0;
  const hi = Math.floor((n - lo) / TWO_32) >>> 0;
  return [lo, hi];
}

function assertSafeInteger(what: string, v: number): void {
  if (!Number.isSafeInteger(v)) throw new BadInputError(`${what} must be a safe integer, got ${String(v)}`);
}

/**
 * The seed of one episode, from the run's seed and the episode's index. Independent of the
 * worker, the clock and the order episodes run in.
 */
export function deriveSeed(runSeed: number, episodeIndex: number): number {
  assertSafeInteger('run seed', runSeed);
  assertSafeInteger('episode index', episodeIndex);
  if (episodeIndex < 0) throw new BadInputError(`episode index must be ≥ 0, got ${episodeIndex}`);
  const [rl, rh] = words(runSeed);
  const [el, eh] = words(episodeIndex);
  return combine(combine(combine(combine(0x45564131, rl), rh), el), eh);
}

/**
 * A generator seeded by `seed` and any number of stream ids (e.g. a node's purpose), so that
 * independent consumers of one episode seed draw independent sequences.
 */
export function createPrng(seed: number, ...streams: number[]): Prng {
  assertSafeInteger('seed', seed);
  for (const [i, s] of streams.entries()) assertSafeInteger(`stream ${i}`, s);
  let h = 0x50524e47;
  for (const v of [seed, ...streams]) {
    const [lo, hi] = words(v);
    h = combine(combine(h, lo), hi);
  }
  // sfc32 state, seeded from independent hashes of h.
  let a = mix32(h ^ 0x1b873593) | 0;
  let b = mix32(h ^ 0xcc9e2d51) | 0;
  let c = mix32(h ^ 0xe6546b64) | 0;
  let d = mix32(h ^ 0x85ebca6b) | 0;

  const uint32 = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) uint32();

  let spare: number | undefined;

  const next = (): number => uint32() / TWO_32;

  const int = (n: number): number => {
    if (!Number.isInteger(n) || n < 1 || n > TWO_32) {
      throw new BadInputError(`int(n) needs an integer n in [1, 2^32], got ${String(n)}`);
    }
    // Reject the top sliver that would make small residues more likely.
    const limit = TWO_32 - (TWO_32 % n);
    for (;;) {
      const r = uint32();
      if (r < limit) return r % n;
    }
  };

  const normal = (mean = 0, std = 1): number => {
    if (spare !== undefined) {
      const z = spare;
      spare = undefined;
      return mean + std * z;
    }
    for (;;) {
      const u = 2 * next() - 1;
      const v = 2 * next() - 1;
      const s = u * u + v * v;
      if (s > 0 && s < 1) {
        const f = Math.sqrt((-2 * Math.log(s)) / s);
        spare = v * f;
        return mean + std * u * f;
      }
    }
  };

  const pick = <T>(arr: readonly T[]): T => {
    if (arr.length === 0) throw new BadInputError('pick() needs a non-empty array');
    return arr[int(arr.length)] as T;
  };

  return { next, uint32, int, normal, pick };
}
