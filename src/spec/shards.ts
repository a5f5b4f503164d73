/**
 * Shards: a run cut into contiguous runs of episode indices whose boundaries come from the
 * spec alone (episodeCount, shardSize), never from the number of machines, so a result merged
 * from shards cannot depend on the fleet. A task `k/K` (1-based, like `vitest --shard`) takes
 * shards k-1, k-1+K, k-1+2K, …; each episode keeps its run index, so its seed is the same
 * whichever machine plays it.
 */
import { BadInputError } from '../errors.js';
import { playCountOf } from './repeats.js';
import { DEFAULT_SHARD_SIZE, type RunSpec } from './run-spec.js';

// Shards cut the run's plays (episodeCount × repeats, spec/repeats.ts); without repeats, its episodes.
type ShardFields = Pick<RunSpec, 'episodeCount' | 'shardSize' | 'repeats'>;

/** A task of a run spread over machines: `task` of `of`, 1-based. */
export interface ShardTask {
  task: number;
  of: number;
}

/** Episodes per shard. */
export const shardSizeOf = (spec: Pick<RunSpec, 'shardSize'>): number => spec.shardSize ?? DEFAULT_SHARD_SIZE;

/** How many shards the run has. */
export const shardCountOf = (spec: ShardFields): number => Math.ceil(playCountOf(spec) / shardSizeOf(spec));

/** The episode indices of shard `s` (0-based): `[first, end)`. */
export function shardRange(spec: ShardFields, s: number): { first: number; end: number } {
  const size = shardSizeOf(spec);
  const first = s * size;
  return { first, end: Math.min(playCountOf(spec), first + size) };
}

/**
 * The run indices shard `s` plays: its whole range, but for an audit's scratch run only the
 * sampled indices in it (none, for a shard the sample misses).
 */
export function shardPlays(spec: ShardFields & Partial<Pick<RunSpec, 'audit'>>, s: number): number[] {
  const { first, end } = shardRange(spec, s);
  const only = spec.audit ? new Set(spec.audit.indices) : null;
  const out: number[] = [];
  for (let i = first; i < end; i++) if (!only || only.has(i)) out.push(i);
  return out;
}

/** The shards (0-based) task `task` of `of` runs. */
export function shardsOfTask(spec: ShardFields, t: ShardTask): number[] {
  const out: number[] = [];
  for (let s = t.task - 1; s < shardCountOf(spec); s += t.of) out.push(s);
  return out;
}

/**
 * The run indices a spec plays, in order: all of them, its task's shards on a partial run, an
 * audit's sample, or those a scale-out worker's shard lists.
 */
export function episodeIndicesOf(
  spec: ShardFields & Pick<RunSpec, 'shard' | 'episodeIndices'> & Partial<Pick<RunSpec, 'audit'>>,
): number[] {
  if (spec.episodeIndices) return [...spec.episodeIndices];
  // An audit's scratch run plays only its sample, under the audited run's indices.
  if (spec.audit) return [...spec.audit.indices];
  if (!spec.shard) return Array.from({ length: playCountOf(spec) }, (_, i) => i);
  const out: number[] = [];
  for (const s of shardsOfTask(spec, spec.shard)) {
    const { first, end } = shardRange(spec, s);
    for (let i = first; i < end; i++) out.push(i);
  }
  return out;
}

/** `k/K` as typed after `--shard`: BAD_USER_INPUT unless 1 ≤ k ≤ K. */
export function parseShardFlag(raw: string): ShardTask {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
  const task = m ? Number(m[1]) : NaN;
  const of = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(task) || !Number.isSafeInteger(of) || of < 1 || task < 1 || task > of) {
    throw new BadInputError(`--shard must be k/K with 1 ≤ k ≤ K (e.g. 2/4), got "${raw}"`);
  }
  return { task, of };
}

/** BAD_USER_INPUT when task k of K would get no shard (K above the run's shard count). */
export function assertTaskHasShards(spec: ShardFields, t: ShardTask): void {
  const count = shardCountOf(spec);
  if (t.of > count) {
    throw new BadInputError(
      `--shard ${t.task}/${t.of}: the run has only ${count} shard(s) of ${shardSizeOf(spec)} episodes, so ${t.of} tasks would leave some empty; use at most ${count} tasks or a smaller --shard-size`,
    );
  }
}

/** Indices as short ranges, e.g. `0..5, 12, 18..23`. */
export function describeIndices(indices: readonly number[]): string {
  const sorted = [...indices].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}..${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}
