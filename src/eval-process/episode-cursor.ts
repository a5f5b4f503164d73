/**
 * EpisodeCursor: the next episode index to run, shared by every worker of a run. A worker that
 * finishes early takes more episodes, so a run ends when the work runs out, not when the
 * unluckiest contiguous chunk does. Which worker ran an episode never changes its result: the
 * episode's seed comes from its index and the records fold in index order.
 *
 * Its state lives in a SharedArrayBuffer, so the play lanes of a run (play-lanes.ts: workers
 * in other threads) take from the same cursor: each makes one over the same order and buffer.
 * Beside the position it counts the run's workers still standing, in every lane, so a worker
 * whose host cannot start knows whether another worker is left to play its share.
 */
const NEXT = 0;
const STANDING = 1;

export class EpisodeCursor {
  readonly count: number;
  /** The shared state (position, workers standing), shared with every cursor made over the same buffer. */
  readonly buffer: SharedArrayBuffer;
  readonly #indices: readonly number[] | undefined;
  readonly #state: Int32Array;

  /** A buffer for a run of `workers` workers: every one counts as standing until it leaves or retires. */
  static bufferFor(workers: number): SharedArrayBuffer {
    const buffer = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * 2);
    new Int32Array(buffer)[STANDING] = workers;
    return buffer;
  }

  /**
   * `count` episodes, indices 0 … count-1; or these indices, in this order (a shard of a run).
   * With `buffer` (another cursor's, or bufferFor's), takes from that cursor's position;
   * without, one worker stands.
   */
  constructor(countOrIndices: number | readonly number[], buffer: SharedArrayBuffer = EpisodeCursor.bufferFor(1)) {
    this.buffer = buffer;
    this.#state = new Int32Array(this.buffer, 0, 2);
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
    if (Atomics.load(this.#state, NEXT) >= this.count) return null;
    const i = Atomics.add(this.#state, NEXT, 1);
    if (i >= this.count) return null;
    return this.#indices ? this.#indices[i]! : i;
  }

  /** How many indices are still to hand out. */
  get remaining(): number {
    return Math.max(0, this.count - Atomics.load(this.#state, NEXT));
  }

  /** A worker is done: nothing left for it to take, or the run stopped. */
  leave(): void {
    Atomics.sub(this.#state, STANDING, 1);
  }

  /** Workers that had retired stand again (their lane was started again, hosts and all). */
  rejoin(workers: number): void {
    if (workers > 0) Atomics.add(this.#state, STANDING, workers);
  }

  /**
   * A worker whose hosts cannot be brought up asks to retire: it may when another worker still
   * stands to play what is left, or when nothing is left to hand out (the others already hold
   * the last episodes). False: it is the last one and the work is not done.
   */
  retire(): boolean {
    for (;;) {
      const standing = Atomics.load(this.#state, STANDING);
      if (standing <= 1 && this.remaining > 0) return false;
      if (Atomics.compareExchange(this.#state, STANDING, standing, standing - 1) === standing) return true;
    }
  }
}
