/**
 * EpisodeCursor: the next episode index to run, shared by every worker of a run. A worker that
 * finishes early takes more episodes, so a run ends when the work runs out, not when the
 * unluckiest contiguous chunk does. Which worker ran an episode never changes its result: the
 * episode's seed comes from its index and the records fold in index order.
 */
export class EpisodeCursor {
  readonly count: number;
  readonly #indices: readonly number[] | undefined;
  #next = 0;

  /** `count` episodes, indices 0 … count-1; or these indices, in this order (a shard of a run). */
  constructor(countOrIndices: number | readonly number[]) {
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
    if (this.#next >= this.count) return null;
    const i = this.#next++;
    return this.#indices ? this.#indices[i]! : i;
  }

  /** How many indices are still to hand out. */
  get remaining(): number {
    return this.count - this.#next;
  }
}
