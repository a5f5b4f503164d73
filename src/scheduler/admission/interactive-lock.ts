/**
 * The interactive lock: while anyone holds it (a live Play session, a stopping server),
 * admission starts nothing. Several may hold it at once; the first still holding is named.
 */
import { BadInputError } from '../../errors.js';

export class InteractiveLock {
  private readonly holders = new Map<symbol, string>();

  /** Who holds the lock, or null. */
  get holder(): string | null {
    for (const h of this.holders.values()) return h;
    return null;
  }

  get held(): boolean {
    return this.holders.size > 0;
  }

  /** Takes the lock for `holder`. Returns the release function (idempotent); `onRelease` runs on its first call. */
  acquire(holder: string, onRelease: () => void): () => void {
    if (typeof holder !== 'string' || holder === '')
      throw new BadInputError(`interactive lock holder must be a non-empty string, got ${JSON.stringify(holder)}`);
    const token = Symbol(holder);
    this.holders.set(token, holder);
    return () => {
      if (this.holders.delete(token)) onRelease();
    };
  }
}
