/**
 * CallWatch: the per-call limit of an episode's node calls kept by one timer instead of one
 * per call. Every call has the same limit, so the oldest call in flight is the next to pass it;
 * the timer is armed for that one and, when it fires, reports each call past the limit and
 * re-arms for the oldest left. A timer set and cleared around every call (two a step of a two-node
 * graph) cost tens of µs a step on a cold cache.
 */

/** A call being watched; hand it back to `done` when it settles. */
export interface WatchedCall {
  readonly nodeId: string;
  readonly step: number;
  readonly startedAt: number;
  /** False once the call's iteration ended some other way: then it is not reported. */
  readonly live: () => boolean;
}

export class CallWatch {
  readonly #limitMs: number;
  readonly #onLate: (call: WatchedCall) => void;
  /** In start order, which (one limit for all) is the order they pass it. */
  readonly #inFlight = new Set<WatchedCall>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  /** `onLate` is called once for each call still in flight `limitMs` after it started. */
  constructor(limitMs: number, onLate: (call: WatchedCall) => void) {
    this.#limitMs = limitMs;
    this.#onLate = onLate;
  }

  start(nodeId: string, step: number, live: () => boolean): WatchedCall {
    const call: WatchedCall = { nodeId, step, startedAt: performance.now(), live };
    if (this.#closed) return call;
    this.#inFlight.add(call);
    // A timer already armed fires no later than this call's limit; only an idle watch arms one.
    if (this.#timer === undefined) this.#arm(this.#limitMs);
    return call;
  }

  done(call: WatchedCall): void {
    this.#inFlight.delete(call);
  }

  /** Stops the timer and forgets every call. Idempotent. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#inFlight.clear();
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#check(), Math.max(1, Math.ceil(ms)));
  }

  #check(): void {
    this.#timer = undefined;
    const now = performance.now();
    for (const call of this.#inFlight) {
      const left = call.startedAt + this.#limitMs - now;
      if (left > 0) {
        this.#arm(left);
        return;
      }
      this.#inFlight.delete(call);
      if (call.live()) this.#onLate(call);
      if (this.#closed) return;
    }
  }
}
