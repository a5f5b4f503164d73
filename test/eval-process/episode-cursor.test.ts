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
});
