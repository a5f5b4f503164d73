import { describe, expect, it } from 'vitest';
import { newcombePairedInterval, pairedCounts } from '../../src/stats/newcombe.js';

describe('newcombePairedInterval', () => {
  it('has width when every pair gained (a t interval over the differences would read [1, 1])', () => {
    // φ is 0 (empty margins), so the bound is 1 − √((1 − 6/(6+z²))² + (z²/(6+z²))²) with z = 1.959964.
    const z2 = 1.959964 ** 2;
    const expected = 1 - Math.sqrt((1 - 6 / (6 + z2)) ** 2 + (z2 / (6 + z2)) ** 2);
    const ci = newcombePairedInterval(pairedCounts([0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]))!;
    expect(ci[0]).toBeCloseTo(expected, 5);
    expect(ci[1]).toBe(1);
  });

  it('is symmetric: swapping the runs negates it, and no change at all is centred on 0', () => {
    const t = { both: 10, gained: 7, lost: 2, neither: 21 };
    const ab = newcombePairedInterval(t)!;
    const ba = newcombePairedInterval({ ...t, gained: t.lost, lost: t.gained })!;
    expect(ba[0]).toBeCloseTo(-ab[1], 12);
    expect(ba[1]).toBeCloseTo(-ab[0], 12);
    const none = newcombePairedInterval({ both: 3, gained: 0, lost: 0, neither: 3 })!;
    expect(none[0]).toBeCloseTo(-none[1], 12);
    expect(none[1]).toBeGreaterThan(0.2);
  });

  it('holds the observed difference and stays inside [−1, 1]', () => {
    for (const t of [
      { both: 1, gained: 1, lost: 7, neither: 12 },
      { both: 59, gained: 6, lost: 16, neither: 80 },
      { both: 0, gained: 0, lost: 9, neither: 0 },
      { both: 0, gained: 1, lost: 0, neither: 0 },
    ]) {
      const n = t.both + t.gained + t.lost + t.neither;
      const diff = (t.gained - t.lost) / n;
      const [lo, hi] = newcombePairedInterval(t)!;
      expect(lo).toBeLessThanOrEqual(diff);
      expect(hi).toBeGreaterThanOrEqual(diff);
      expect(lo).toBeGreaterThanOrEqual(-1);
      expect(hi).toBeLessThanOrEqual(1);
      expect(hi - lo).toBeGreaterThan(0);
    }
  });

  it('narrows when the pairs agree more (a positive correlation) at the same margins', () => {
    // Both tables: 20 of 40 baseline ones, 26 of 40 candidate ones; the first has far fewer discordant pairs.
    const agreeing = newcombePairedInterval({ both: 20, gained: 6, lost: 0, neither: 14 })!;
    const independent = newcombePairedInterval({ both: 13, gained: 13, lost: 7, neither: 7 })!;
    expect(agreeing[1] - agreeing[0]).toBeLessThan(independent[1] - independent[0]);
  });

  it('is null without pairs', () => {
    expect(newcombePairedInterval({ both: 0, gained: 0, lost: 0, neither: 0 })).toBeNull();
  });
});
