/**
 * One `abort` listener per signal for the many short calls made under it: an episode's signal
 * sees two calls a step, and adding and removing an EventTarget listener around each one cost
 * tens of µs a step. The signal's single listener calls whoever is still registered.
 */
const registered = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `onAbort` when `signal` aborts (not when it already has: check first); the returned function unregisters it. */
export function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  let waiting = registered.get(signal);
  if (!waiting) {
    const set = new Set<() => void>();
    waiting = set;
    registered.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        const due = [...set];
        set.clear();
        for (const cb of due) cb();
      },
      { once: true },
    );
  }
  const set = waiting;
  set.add(onAbort);
  return () => {
    set.delete(onAbort);
  };
}
