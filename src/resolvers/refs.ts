/**
 * Type references shared between domain files (declared here, implemented in their own file),
 * so the domains can point at each other without import cycles.
 */
import { EPISODE_STATUSES, episodeStatusMeaning, RUN_STATUSES, runStatusMeaning } from '../statuses.js';
import type { EpisodeRecord } from '../store/types.js';
import { builder } from './builder.js';
import type { RunSource } from './run-source.js';

export const RunStatusRef = builder.enumType('RunStatus', {
  description: 'Where a run is in its lifecycle.',
  values: Object.fromEntries(RUN_STATUSES.map((s) => [s, { value: s, description: runStatusMeaning(s) }])) as Record<
    (typeof RUN_STATUSES)[number],
    { value: (typeof RUN_STATUSES)[number]; description: string }
  >,
});

export const EpisodeStatusRef = builder.enumType('EpisodeStatus', {
  description: 'How an episode ended. Every ending comes with the metrics and steps measured up to it.',
  values: Object.fromEntries(EPISODE_STATUSES.map((s) => [s, { value: s, description: episodeStatusMeaning(s) }])) as Record<
    (typeof EPISODE_STATUSES)[number],
    { value: (typeof EPISODE_STATUSES)[number]; description: string }
  >,
});

/** An episode record together with the run it belongs to. */
export interface EpisodeSource {
  runId: string;
  record: EpisodeRecord;
}

export const RunRef = builder.objectRef<RunSource>('Run');
export const EpisodeRef = builder.objectRef<EpisodeSource>('Episode');
