/**
 * A blocking submit with a timeout: while the queue is full, wait for it to change (a run
 * started, was cancelled or left) and try again, until `waitMs` has passed; then the last
 * QUEUE_FULL stands. A submitter that would retry in a loop waits here instead.
 */
import { BadInputError, QueueFullError } from '../errors.js';
import type { RunInputFields } from '../spec/run-spec.js';
import type { RunSummary } from '../store/types.js';
import type { SchedulerEvent } from './types.js';

/** What the wait needs of a scheduler: without `subscribe` it looks again every POLL_MS. */
export interface SubmitTarget {
  submit(fields: RunInputFields): Promise<RunSummary>;
  subscribe?(listener: (e: SchedulerEvent) => void): () => void;
}

const POLL_MS = 250;

/** The longest wait for room a submitter may ask for (seconds). */
export const MAX_WAIT_FOR_ROOM_SEC = 3600;

/** BAD_USER_INPUT naming `field` unless `sec` is a number of seconds in 0..MAX_WAIT_FOR_ROOM_SEC. */
export function checkWaitForRoom(sec: unknown, field = 'waitForRoomSec'): number {
  if (typeof sec !== 'number' || !Number.isFinite(sec) || sec < 0 || sec > MAX_WAIT_FOR_ROOM_SEC)
    throw new BadInputError(`${field} must be a number of seconds in 0..${MAX_WAIT_FOR_ROOM_SEC}, got ${JSON.stringify(sec)}`);
  return sec;
}

export async function submitWhenRoom(
  scheduler: SubmitTarget,
  fields: RunInputFields,
  waitMs: number,
  signal?: AbortSignal,
): Promise<RunSummary> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    // Listening before the attempt: a change between the refusal and the wait is not missed.
    let changed = false;
    let wake: (() => void) | undefined;
    const off =
      scheduler.subscribe?.((e) => {
        if (e.type !== 'queue') return;
        changed = true;
        wake?.();
      }) ?? (() => {});
    try {
      return await scheduler.submit(fields);
    } catch (err) {
      const left = deadline - Date.now();
      if (!(err instanceof QueueFullError) || left <= 0) throw err;
      signal?.throwIfAborted();
      if (!changed) {
        await new Promise<void>((resolve, reject) => {
          const onAbort = () => {
            clearTimeout(timer);
            reject(signal!.reason);
          };
          const timer = setTimeout(
            () => {
              signal?.removeEventListener('abort', onAbort);
              resolve();
            },
            Math.min(left, scheduler.subscribe ? left : POLL_MS),
          );
          wake = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            resolve();
          };
          signal?.addEventListener('abort', onAbort, { once: true });
        });
      }
    } finally {
      off();
    }
  }
}
