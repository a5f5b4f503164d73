/**
 * The eval process's heartbeat: a `{ type: 'heartbeat' }` on its IPC channel every
 * `EVAL_HEARTBEAT_MS`, from the main thread's event loop. A process that is stopped (SIGSTOP),
 * or whose main thread is held by a call that never returns, sends none, and its parent ends
 * the run HUNG; play lanes are threads of their own and have their own watchdog (play-lanes.ts).
 */
import type { HeartbeatMessage } from './messages.js';

/** The period in milliseconds, set by a parent that listens (the scheduler, a scale-out worker) from its hung limit. */
export const HEARTBEAT_ENV = 'EVAL_HEARTBEAT_MS';
/** The longest period a parent asks for. */
export const MAX_HEARTBEAT_MS = 1000;

/** The period for a parent that takes `hungMs` of silence as a hang: several beats fit in the limit. */
export function heartbeatMsFor(hungMs: number): number {
  return Math.max(50, Math.min(MAX_HEARTBEAT_MS, Math.floor(hungMs / 5)));
}

/**
 * Starts beating when the parent asked for it (HEARTBEAT_ENV) over an IPC channel; returns the
 * stop. A parent that does not listen (`evalctl run`) gets none: its IPC layer may keep every
 * message. The timer never keeps the process alive.
 */
export function startHeartbeat(env: NodeJS.ProcessEnv = process.env): () => void {
  const period = Number(env[HEARTBEAT_ENV]);
  if (!process.send || !Number.isFinite(period) || period <= 0) return () => {};
  const beat = (): void => {
    // With a callback, a send that fails (the parent just went) is not thrown as the process's 'error'.
    if (process.connected) process.send?.({ type: 'heartbeat' } satisfies HeartbeatMessage, undefined, undefined, () => {});
  };
  beat();
  const timer = setInterval(beat, period);
  timer.unref();
  return () => clearInterval(timer);
}
