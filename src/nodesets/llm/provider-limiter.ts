/**
 * A counting semaphore per provider (base URL), shared by every caller in this host process: the
 * `llm` nodeset runs `shared`, so one host per machine serves every worker of every run and this
 * limit holds machine-wide.
 */
export class ProviderLimiter {
  #limit: number;
  #active = 0;
  readonly #queue: Array<() => void> = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** The latest configured limit wins; a raised limit lets waiters in at once. */
  set limit(n: number) {
    this.#limit = n;
    this.#drain();
  }

  get active(): number {
    return this.#active;
  }

  /** Resolves with a release function once a slot is free; rejects if `signal` aborts while waiting. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.#active++;
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.#active--;
          this.#drain();
        });
      };
      const onAbort = (): void => {
        const i = this.#queue.indexOf(grant);
        if (i >= 0) this.#queue.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(grant);
      this.#drain();
    });
  }

  #drain(): void {
    while (this.#active < this.#limit && this.#queue.length > 0) this.#queue.shift()!();
  }
}

const limiters = new Map<string, ProviderLimiter>();

export function limiterFor(baseURL: string, limit: number): ProviderLimiter {
  let l = limiters.get(baseURL);
  if (!l) {
    l = new ProviderLimiter(limit);
    limiters.set(baseURL, l);
  } else {
    l.limit = limit;
  }
  return l;
}
