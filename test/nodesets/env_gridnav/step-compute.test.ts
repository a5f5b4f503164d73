import { describe, expect, it } from 'vitest';
import { interpolatedCpuClock } from '../../../src/nodesets/env_gridnav/step-compute.js';

/** A source booked in whole ticks, as the kernel books a thread's CPU time, and a wall clock the test moves. */
function fakeClocks(): { raw: () => number; wall: () => number; run: (us: number) => void; sleep: (us: number) => void } {
  const TICK = 4000;
  let cpu = 0;
  let wall = 0;
  return {
    raw: () => Math.floor(cpu / TICK) * TICK,
    wall: () => wall,
    run: (us) => {
      cpu += us;
      wall += us;
    },
    sleep: (us) => {
      wall += us;
    },
  };
}

describe('interpolatedCpuClock', () => {
  it('follows CPU time between the kernel’s coarse updates, so a budget ends on time', () => {
    const c = fakeClocks();
    const clock = interpolatedCpuClock(c.raw, c.wall);
    c.run(500);
    const start = clock()!;
    // Spend 10 ms the way computeFor does: work ~100 µs, read, until the budget is spent.
    let spent = 0;
    while (clock()! < start + 10_000) {
      c.run(100);
      spent += 100;
    }
    // The raw source alone would end only at the next 4 ms tick (12 ms of work here).
    expect(spent).toBeGreaterThanOrEqual(9_500);
    expect(spent).toBeLessThanOrEqual(10_600);
  });

  it('does not count a long gap between reads (the thread was not running)', () => {
    const c = fakeClocks();
    const clock = interpolatedCpuClock(c.raw, c.wall);
    c.run(4_100);
    const a = clock()!;
    c.sleep(50_000);
    expect(clock()).toBe(a);
    c.run(200);
    expect(clock()).toBe(a + 200);
  });

  it('passes an unavailable source through', () => {
    expect(
      interpolatedCpuClock(
        () => undefined,
        () => 0,
      )(),
    ).toBeUndefined();
  });
});
