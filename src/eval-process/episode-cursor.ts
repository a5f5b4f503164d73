/**
 * EpisodeCursor: the next episode index to run, shared by every worker of a run. A worker that
 * finishes early takes more episodes, so a run ends when the work runs out, not when the
 * unluckiest contiguous chunk does. Which worker ran an episode never changes its result: the
 * episode's seed comes from its index and the records fold in index order.
 *
 * Its position lives in a SharedArrayBuffer, so the play lanes of a run (play-lanes.ts: workers
 * in other threads) take from the same cursor: each makes one over the same order and buffer.
 */
export class EpisodeCursor {
  readonly count: number;
  /** The position, shared with every cursor made over the same buffer. */
  readonly buffer: SharedArrayBuffer;
  readonly #indices: readonly number[] | undefined;
  readonly #next: Int32Array;

  /**
   * `count` episodes, indices 0 … count-1; or these indices, in this order (a shard of a run).
   * With `buffer` (another cursor's), takes from that cursor's position.
   */
  constructor(countOrIndices: number | readonly number[], buffer?: SharedArrayBuffer) {
    this.buffer = buffer ?? new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
    this.#next = new Int32Array(this.buffer, 0, 1);
    if (typeof countOrIndices !== 'number') {
      this.#indices = [...countOrIndices];
      this.count = this.#indices.length;
      return;
    }
    const count = countOrIndices;
    if (!Number.isInteger(count) || count < 0) throw new RangeError(`episode count must be a non-negative integer, got ${count}`);
    this.count = count;
  }

  /** The next index not yet handed out, or null when every episode has been. */
  take(): number | null {
    if (Atomics.load(this.#next, 0) >= this.count) return null;
    const i = Atomics.add(this.#next, 0, 1);
    if (i >= this.count) return null;
    return this.#indices ? this.#indices[i]! : i;
  }

  /** How many indices are still to hand out. */
  get remaining(): number {
    return Math.max(0, this.count - Atomics.load(this.#next, 0));
  }
}
