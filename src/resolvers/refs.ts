/**
 * Type references shared between domain files (declared here, implemented in their own file),
 * so the domains can point at each other without import cycles.
 */
import { EPISODE_STATUSES, RUN_STATUSES } from '../statuses.js';
import type { EpisodeRecord } from '../store/types.js';
import { builder } from './builder.js';
import type { RunSource } from './run-source.js';

const RUN_STATUS_DESCRIPTIONS: Record<(typeof RUN_STATUSES)[number], string> = {
  QUEUED: 'Accepted and waiting for the scheduler to admit it.',
  RUNNING: 'Its eval process (or the in-process runner) is executing episodes.',
  COMPLETED: 'Every episode ended, whatever each scored.',
  FAILED: 'The run could not go on (bad graph at start, out of its memory budget, an internal error); see `error`.',
  CANCELLED: 'Stopped on request; finished episodes are kept.',
  ABORTED: 'Its process died without finishing (killed, crashed, or the backend restarted under it).',
};

const EPISODE_STATUS_DESCRIPTIONS: Record<(typeof EPISODE_STATUSES)[number], string> = {
  COMPLETED: 'A node said `done` and the metrics were harvested.',
  BUDGET_EXHAUSTED: 'The step budget ran out before any node said `done`.',
  TIMEOUT: 'The wall-clock limit (budget × per-step seconds) passed; the one ending that can depend on machine speed.',
  ERROR: 'One or more nodes returned or threw an error; `nodeErrors` names them.',
  NO_VERDICT: 'The episode finished but no graphOut received a metric.',
  CRASHED: 'An unexpected exception or a dead host; the worker\'s host was respawned.',
  CANCELLED: 'The run was cancelled while this episode was in flight.',
};

export const RunStatusRef = builder.enumType('RunStatus', {
  description: 'Where a run is in its lifecycle.',
  values: Object.fromEntries(
    RUN_STATUSES.map((s) => [s, { value: s, description: RUN_STATUS_DESCRIPTIONS[s] }]),
  ) as Record<(typeof RUN_STATUSES)[number], { value: (typeof RUN_STATUSES)[number]; description: string }>,
});

export const EpisodeStatusRef = builder.enumType('EpisodeStatus', {
  description: 'How an episode ended. Every ending comes with the metrics and steps measured up to it.',
  values: Object.fromEntries(
    EPISODE_STATUSES.map((s) => [s, { value: s, description: EPISODE_STATUS_DESCRIPTIONS[s] }]),
  ) as Record<(typeof EPISODE_STATUSES)[number], { value: (typeof EPISODE_STATUSES)[number]; description: string }>,
});

/** An episode record together with the run it belongs to. */
export interface EpisodeSource {
  runId: string;
  record: EpisodeRecord;
}

export const RunRef = builder.objectRef<RunSource>('Run');
export const EpisodeRef = builder.objectRef<EpisodeSource>('Episode');
