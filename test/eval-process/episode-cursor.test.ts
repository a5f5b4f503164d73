import { describe, expect, it } from 'vitest';
import { EpisodeCursor } from '../../src/eval-process/episode-cursor.js';

describe('EpisodeCursor', () => {
  it('hands out every index once, in order, then null', () => {
    const cursor = new EpisodeCursor(3);
    expect([cursor.take(), cursor.take(), cursor.remaining, cursor.take(), cursor.take()]).toEqual([0, 1, 1, 2, null]);
    expect(cursor.remaining).toBe(0);
  });

  it('has nothing to hand out for zero episodes and refuses a bad count', () => {
    expect(new EpisodeCursor(0).take()).toBeNull();
    expect(() => new EpisodeCursor(-1)).toThrow(/non-negative integer, got -1/);
  });

  it('shares its position with cursors made over its buffer (the lanes of one run): each index goes out once', () => {
    const a = new EpisodeCursor([5, 3, 9, 1]);
    const b = new EpisodeCursor([5, 3, 9, 1], a.buffer);
    expect([a.take(), b.take(), b.take(), a.remaining, a.take(), b.take(), a.take()]).toEqual([5, 3, 9, 1, 1, null, null]);
    expect(b.remaining).toBe(0);
  });

  it('lets a worker retire while another stands in any lane, and the last one only once nothing is left to hand out', () => {
    const lane0 = new EpisodeCursor(3, EpisodeCursor.bufferFor(3));
    const lane1 = new EpisodeCursor(3, lane0.buffer);
    expect(lane1.retire()).toBe(true);
    expect(lane0.retire()).toBe(true);
    // The third worker is the last one standing and three episodes are left: it may not retire.
    expect(lane1.retire()).toBe(false);
    lane0.take();
    lane0.take();
    lane0.take();
    // Every episode is handed out (its holder plays it): a worker whose host fails now is not needed.
    expect(lane1.retire()).toBe(true);
  });

  it('counts a worker that left as gone: the one still standing is the last', () => {
    const cursor = new EpisodeCursor(2, EpisodeCursor.bufferFor(2));
    cursor.leave();
    expect(cursor.retire()).toBe(false);
  });

  it('counts workers that retired as standing again once their lane is started again', () => {
    const cursor = new EpisodeCursor(2, EpisodeCursor.bufferFor(2));
    expect(cursor.retire()).toBe(true);
    expect(cursor.retire()).toBe(false);
    cursor.rejoin(1);
    expect(cursor.retire()).toBe(true);
  });
});
