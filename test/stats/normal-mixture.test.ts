import { describe, expect, it } from 'vitest';
import { createPrng } from '../../src/core/prng.js';
import { AsymptoticSequence, bestRho, normalMixtureBoundary } from '../../src/stats/normal-mixture.js';

describe('the two-sided normal-mixture boundary (Howard et al. 2021, eq. (14))', () => {
  it('is √((v + ρ) log((v + ρ)/(ρα²))), checked by hand', () => {
    // v = 99, ρ = 1, α = 0.05: √(100 · log(100 / 0.0025)) = 10 √(log 40000) = 32.5523…
    expect(normalMixtureBoundary(99, 1, 0.05)).toBeCloseTo(10 * Math.sqrt(Math.log(40000)), 12);
    expect(normalMixtureBoundary(99, 1, 0.05)).toBeCloseTo(32.5525, 3);
  });

  it('tunes ρ for a time as confseq does: v_opt / (2 log(1/α) + log(1 + 2 log(1/α)))', () => {
    const l = Math.log(20);
    expect(bestRho(200, 0.05)).toBeCloseTo(200 / (2 * l + Math.log(1 + 2 * l)), 12);
    // Tuned for v = 200, the boundary there is narrower than with ρ ten times either way.
    const at = (rho: number) => normalMixtureBoundary(200, rho, 0.05);
    expect(at(bestRho(200, 0.05))).toBeLessThan(at(bestRho(200, 0.05) * 10));
    expect(at(bestRho(200, 0.05))).toBeLessThan(at(bestRho(200, 0.05) / 10));
  });
});

describe('AsymptoticSequence', () => {
  it('gives no interval before its minimum count, then one around the mean that narrows', () => {
    const rng = createPrng(3);
    const s = new AsymptoticSequence(0.05);
    const widths: number[] = [];
    for (let i = 1; i <= 2000; i++) {
      s.push(5 + (rng.next() - 0.5) * 4);
      if (i === 19) expect(s.lower).toBe(Number.NEGATIVE_INFINITY);
      if (i % 500 === 0) widths.push(s.upper - s.lower);
    }
    expect(s.lower).toBeLessThan(5);
    expect(s.upper).toBeGreaterThan(5);
    expect(widths[3]!).toBeLessThan(widths[0]!);
  });
});
