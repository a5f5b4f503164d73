/**
 * Retries over GraphQL (docs/retry.md): the `retryRun` mutation, and `Run.attempt`.
 */
import { ConflictError } from '../errors.js';
import { currentAttemptOf, readAttempts, type RetriedEpisode } from '../store/attempts.js';
import { assertRunId, isValidRunId, runDirPath } from '../store/run-dir.js';
import type { RunSummary } from '../store/types.js';
import { builder } from './builder.js';
import { EpisodeStatusRef, RunRef, RunStatusRef } from './refs.js';
import { sourceFromSummary, type RunSource } from './run-source.js';
import { assertRunExists } from './run.js';

interface RetryPayload {
  summary: RunSummary;
  attempt: number;
  retried: RetriedEpisode[];
}

const RetriedEpisodeRef = builder.objectRef<RetriedEpisode>('RetriedEpisode').implement({
  description: 'An episode a retry plays again, and how it ended before.',
  fields: (t) => ({
    index: t.exposeInt('index', { description: 'Its run index.' }),
    ending: t.field({
      type: EpisodeStatusRef,
      nullable: true,
      description: 'How its latest earlier attempt ended; null when it never ran (the run stopped first).',
      resolve: (r) => r.ending,
    }),
    attempt: t.exposeInt('attempt', { description: 'The attempt that record belongs to.' }),
  }),
});

const RetryPayloadRef = builder.objectRef<RetryPayload>('RetryPayload').implement({
  description: 'A queued retry: a new attempt of the same run, waiting for admission like any run.',
  fields: (t) => ({
    runId: t.id({ description: 'The run id (unchanged).', resolve: (p) => p.summary.runId }),
    status: t.field({ type: RunStatusRef, description: 'QUEUED on acceptance.', resolve: (p) => p.summary.status }),
    attempt: t.exposeInt('attempt', { description: "The new attempt's number (the run as submitted is attempt 1)." }),
    retried: t.field({
      type: [RetriedEpisodeRef],
      description: 'The episodes it plays again, by index.',
      resolve: (p) => p.retried,
    }),
    run: t.field({ type: RunRef, description: 'The run as it stands.', resolve: (p, _a, ctx) => sourceFromSummary(p.summary, ctx) }),
  }),
});

builder.objectField(RunRef, 'attempt', (t) =>
  t.int({
    description: 'Which attempt the run is on: 1 as submitted, one more per retry (docs/retry.md).',
    resolve: async (src: RunSource, _a, ctx) =>
      isValidRunId(src.row.id) ? currentAttemptOf(await readAttempts(runDirPath(ctx.outputsDir, src.row.id))) : 1,
  }),
);

builder.mutationFields((t) => ({
  retryRun: t.field({
    type: RetryPayloadRef,
    description:
      "Plays again, as a new attempt of the same run (same id, seeds, spec and frozen graph), the episodes whose latest attempt ended in `endings` and those that never ran. Earlier attempts' records are kept under attempts/<n>/; the run's records, aggregates and report then show each episode's latest attempt. Queued like any run; its status goes QUEUED → RUNNING → its end. A COMPLETED episode is never played again. CONFLICT while the run is queued or running; NOTHING_TO_RETRY when no episode qualifies; QUEUE_FULL; NOT_FOUND.",
    args: {
      id: t.arg.id({ required: true, description: 'The run id.' }),
      endings: t.arg({
        type: [EpisodeStatusRef],
        description: 'Endings to play again. Default: CRASHED, TIMEOUT, ERROR, INFRA_ERROR, CANCELLED (COMPLETED is refused).',
      }),
    },
    resolve: async (_root, args, ctx) => {
      const runId = String(args.id);
      assertRunId(runId);
      await assertRunExists(runId, ctx);
      if (!ctx.scheduler.retry) throw new ConflictError('this server cannot retry runs');
      return ctx.scheduler.retry(runId, args.endings ?? null);
    },
  }),
}));
