/**
 * Lifecycle states, one table each (state → what it means), shared by the store, the schema's
 * enum descriptions and the dashboard.
 */

/** A run's lifecycle, in order. */
const RUN_STATUS_MEANINGS = {
  QUEUED: 'Accepted and waiting for the scheduler to admit it.',
  RUNNING: 'Its eval process (or the in-process runner) is executing episodes.',
  COMPLETED: 'Every episode ended, whatever each scored.',
  FAILED: 'The run could not go on (bad graph at start, out of its memory budget, a storage fault, an internal error); see `error`.',
  CANCELLED: 'Stopped on request; finished episodes are kept, in-flight ones end CANCELLED.',
  ABORTED: 'Its process died without finishing (killed, crashed, or the backend restarted under it).',
} as const;
export type RunStatus = keyof typeof RUN_STATUS_MEANINGS;
export const RUN_STATUSES = Object.keys(RUN_STATUS_MEANINGS) as [RunStatus, ...RunStatus[]];
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED', 'ABORTED'];
export const isTerminalRunStatus = (s: RunStatus): boolean => TERMINAL_RUN_STATUSES.includes(s);
export const runStatusMeaning = (s: RunStatus): string => RUN_STATUS_MEANINGS[s];

/** How one episode ended. Every ending yields a full record with the metrics measured so far. */
const EPISODE_STATUS_MEANINGS = {
  COMPLETED: 'A node said `done` and the metrics were harvested.',
  BUDGET_EXHAUSTED:
    "The step budget (or a node's own budget, such as `max_llm_calls` or `max_episode_tokens`) ran out before any node said `done`.",
  TIMEOUT:
    'The wall-clock limit (budget × per-step seconds) passed, or one host call went unanswered past the per-call limit; the one ending that can depend on machine speed.',
  ERROR: 'One or more nodes returned or threw an error; `nodeErrors` names them.',
  NO_VERDICT: 'The episode finished but no graphOut received a metric.',
  CRASHED: "An unexpected exception or a dead host; the worker's host was respawned.",
  CANCELLED: 'The run was cancelled while this episode was in flight.',
  INFRA_ERROR:
    'Infrastructure failed (a model endpoint still unreachable or failing after its retries): reported apart and left out of metric means, never counted as a wrong answer.',
} as const;
export type EpisodeStatus = keyof typeof EPISODE_STATUS_MEANINGS;
export const EPISODE_STATUSES = Object.keys(EPISODE_STATUS_MEANINGS) as [EpisodeStatus, ...EpisodeStatus[]];

/** Endings left out of a metric's mean (store/counted-endings.ts), and of the dashboard's charts of it: the episode was stopped for reasons outside the agent. */
export const UNSCORED_ENDINGS: readonly EpisodeStatus[] = ['CANCELLED', 'INFRA_ERROR'];
export const episodeStatusMeaning = (s: EpisodeStatus): string => EPISODE_STATUS_MEANINGS[s];
