/** Waits `ms` milliseconds unless `signal` aborts first (then rejects with the signal's reason). */
import { setTimeout as delay } from 'node:timers/promises';

export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  if (ms <= 0) return;
  try {
    await delay(ms, undefined, signal ? { signal } : undefined);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw err;
  }
}
