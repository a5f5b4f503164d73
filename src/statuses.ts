/**
 * Lifecycle states, one list each, shared by the store, the schema and the dashboard.
 */

/** A run's lifecycle. */
export const RUN_STATUSES = [
  /** Accepted and waiting for the scheduler to admit it. */
  'QUEUED',
  /** Its eval process (or in-process runner) is executing episodes. */
  'RUNNING',
  /** Every episode ended (whatever each scored). */
  'COMPLETED',
  /** The run could not go on: bad graph at start, out of its memory budget, an internal error. */
  'FAILED',
  /** Stopped on request; finished episodes are kept. */
  'CANCELLED',
  /** Its process died without finishing (killed, crashed, or the backend restarted under it). */
  'ABORTED',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED', 'ABORTED'];
export const isTerminalRunStatus = (s: RunStatus): boolean => TERMINAL_RUN_STATUSES.includes(s);

/** How one episode ended. Every ending yields a full record with the metrics measured so far. */
export const EPISODE_STATUSES = [
  /** A node said `done` and metrics were harvested. */
  'COMPLETED',
  /** The step budget ran out before any node said `done`. */
  'BUDGET_EXHAUSTED',
  /** The wall-clock limit (budget × per-step seconds) passed; the one ending that can depend on machine speed. */
  'TIMEOUT',
  /** One or more nodes returned or threw an error; the record names them. */
  'ERROR',
  /** The episode finished but no graphOut received a metric. */
  'NO_VERDICT',
  /** An unexpected exception or a dead host; the worker's host is respawned. */
  'CRASHED',
  /** The run was cancelled while this episode was in flight. */
  'CANCELLED',
] as const;
export type EpisodeStatus = (typeof EPISODE_STATUSES)[number];
