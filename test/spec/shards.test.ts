import { describe, expect, it } from 'vitest';
import { describeIndices, episodeIndicesOf, parseShardFlag, shardCountOf, shardRange, shardsOfTask } from '../../src/spec/shards.js';

describe('shards', () => {
  it('cuts the run by shard size alone; the last shard may be short', () => {
    const spec = { episodeCount: 20, shardSize: 6 };
    expect(shardCountOf(spec)).toBe(4);
    expect(shardRange(spec, 3)).toEqual({ first: 18, end: 20 });
    expect(shardCountOf({ episodeCount: 20 })).toBe(2);
  });

  it('task k/K takes every K-th shard, so the boundaries never depend on K', () => {
    const spec = { episodeCount: 20, shardSize: 4 };
    expect(shardsOfTask(spec, { task: 2, of: 2 })).toEqual([1, 3]);
    expect(episodeIndicesOf({ ...spec, shard: { task: 2, of: 2 } })).toEqual([4, 5, 6, 7, 12, 13, 14, 15]);
    expect(episodeIndicesOf(spec)).toHaveLength(20);
  });

  it('parses k/K and refuses anything else', () => {
    expect(parseShardFlag('2/4')).toEqual({ task: 2, of: 4 });
    for (const bad of ['0/4', '5/4', '2', 'a/b', '1/0']) expect(() => parseShardFlag(bad)).toThrow(/--shard must be k\/K/);
  });

  it('with repeats, cuts the plays (episodes × repeats), whose indices are i × K + k', () => {
    const spec = { episodeCount: 5, repeats: 3, shardSize: 4 };
    expect(shardCountOf(spec)).toBe(4);
    expect(shardRange(spec, 3)).toEqual({ first: 12, end: 15 });
    expect(episodeIndicesOf({ ...spec, shard: { task: 2, of: 2 } })).toEqual([4, 5, 6, 7, 12, 13, 14]);
  });

  it('describes indices as ranges', () => {
    expect(describeIndices([5, 0, 1, 2, 7, 8])).toBe('0..2, 5, 7..8');
  });
});
