import { describe, expect, it } from 'vitest';
import { createPrng, deriveSeed } from '../../src/core/prng.js';

describe('deriveSeed', () => {
  it('is a pure function of (run seed, episode index) giving a uint32', () => {
    for (const [s, i] of [
      [0, 0],
      [7, 3],
      [-1, 12],
      [2 ** 40 + 5, 999_999],
    ] as const) {
      const a = deriveSeed(s, i);
      expect(a).toBe(deriveSeed(s, i));
      expect(Number.isInteger(a) && a >= 0 && a < 2 ** 32).toBe(true);
    }
  });

  it('pins known values, so a change of the mixing (which would change every stored result) is noticed', () => {
    expect([deriveSeed(0, 0), deriveSeed(0, 1), deriveSeed(7, 3)]).toEqual([66102484, 3010427310, 1123507121]);
    const r = createPrng(deriveSeed(7, 3));
    expect([r.uint32(), r.uint32()]).toEqual([1562583556, 1122805083]);
  });

  it('gives every episode of a run a different seed, and separates runs', () => {
    const seen = new Set<number>();
    for (let run = 0; run < 20; run++) for (let ep = 0; ep < 500; ep++) seen.add(deriveSeed(run, ep));
    expect(seen.size).toBe(20 * 500);
    // Neighbouring seeds must not produce related seeds (no seed + index arithmetic).
    expect(deriveSeed(1, 0)).not.toBe(deriveSeed(0, 1));
  });

  it('refuses non-integer or negative indices with the bad value in the message', () => {
    expect(() => deriveSeed(1.5, 0)).toThrow(/run seed.*1\.5/);
    expect(() => deriveSeed(0, -1)).toThrow(/episode index.*-1/);
    expect(() => deriveSeed(Number.NaN, 0)).toThrow(/NaN/);
  });
});

describe('createPrng', () => {
  const take = (n: number, f: () => number) => Array.from({ length: n }, f);

  it('replays the same sequence from the same seed and streams', () => {
    const a = createPrng(42, 1, 2);
    const b = createPrng(42, 1, 2);
    expect(take(100, () => a.next())).toEqual(take(100, () => b.next()));
    expect(take(50, () => a.normal())).toEqual(take(50, () => b.normal()));
  });

  it('gives independent sequences for different seeds and streams', () => {
    const first = (seed: number, ...s: number[]) => take(8, createPrng(seed, ...s).uint32);
    expect(first(1)).not.toEqual(first(2));
    expect(first(1, 0)).not.toEqual(first(1, 1));
    expect(first(1)).not.toEqual(first(1, 0));
    expect(first(deriveSeed(0, 0))).not.toEqual(first(deriveSeed(0, 1)));
  });

  it('is roughly uniform: next() in [0,1) with even deciles, int(n) covers [0,n) evenly', () => {
    const r = createPrng(deriveSeed(3, 9));
    const n = 100_000;
    const deciles = new Array<number>(10).fill(0);
    let sum = 0;
    let outside = 0;
    for (let i = 0; i < n; i++) {
      const x = r.next();
      if (!(x >= 0 && x < 1)) outside++;
      deciles[Math.floor(x * 10)]!++;
      sum += x;
    }
    expect(outside).toBe(0);
    expect(Math.abs(sum / n - 0.5)).toBeLessThan(0.01);
    for (const c of deciles) expect(Math.abs(c - n / 10)).toBeLessThan(n / 100);

    const counts = new Array<number>(7).fill(0);
    for (let i = 0; i < 70_000; i++) counts[r.int(7)]!++;
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(500);
  });

  it('normal() has mean 0 and variance 1, and honours mean/std', () => {
    const r = createPrng(11);
    const xs = take(50_000, () => r.normal());
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(Math.abs(variance - 1)).toBeLessThan(0.05);
    const ys = take(20_000, () => r.normal(10, 2));
    expect(Math.abs(ys.reduce((a, b) => a + b, 0) / ys.length - 10)).toBeLessThan(0.1);
  });

  it('pick() returns every element over many draws and refuses an empty array', () => {
    const r = createPrng(5);
    const arr = ['forward', 'left', 'right', 'stop'] as const;
    const seen = new Set(take(200, () => arr.indexOf(r.pick(arr))));
    expect([...seen].sort()).toEqual([0, 1, 2, 3]);
    expect(() => r.pick([])).toThrow(/non-empty/);
    expect(() => r.int(0)).toThrow(/got 0/);
    expect(() => r.int(2.5)).toThrow(/2\.5/);
  });
});
