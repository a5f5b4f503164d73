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
});
