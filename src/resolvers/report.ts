/**
 * Scores and reports over GraphQL: `Run.report` (the evaluation report, report.json's shape,
 * built fresh from the run's files), `Episode.scores` (the record's scores with its
 * rescorings) and the `rescoreRun` mutation.
 */
import { listScorers, prepareScorer } from '../scoring/registry.js';
import { buildReport, type RunReport } from '../store/report.js';
import { readAttempts } from '../store/attempts.js';
import { rescoreRunInThread } from '../store/rescore-in-thread.js';
import { readRescores, scoresOf } from '../store/rescores.js';
import { isValidRunId, runDirPath } from '../store/run-dir.js';
import { builder } from './builder.js';
import { EpisodeRef, RunRef } from './refs.js';
import { loadRun, loadSummary } from './run-source.js';
import type { RunSource } from './run-source.js';
import { assertRunExists } from './run.js';

/** The run's rescorings; none for an id that names no run directory. */
const rescoresOf = async (outputsDir: string, runId: string) => (isValidRunId(runId) ? readRescores(runDirPath(outputsDir, runId)) : []);

builder.objectField(RunRef, 'report', (t) =>
  t.field({
    type: 'JSON',
    nullable: true,
    description:
      "The evaluation report (report.json's shape, docs/scoring.md): metrics with error bars, the rate of each ending and of infrastructure failures, per scorer the mean and, for label targets, per-class precision/recall/F1 and the confusion matrix, the worst and best episodes, cost per episode. Built from the run's files as they are now; null when it has no summary.",
    resolve: async (src: RunSource, _a, ctx): Promise<RunReport | null> => {
      const summary = await loadSummary(src, ctx);
      if (!summary) return null;
      const attempts = isValidRunId(summary.runId) ? await readAttempts(runDirPath(ctx.outputsDir, summary.runId)) : null;
      return buildReport(summary, await rescoresOf(ctx.outputsDir, summary.runId), attempts);
    },
  }),
);

builder.objectField(EpisodeRef, 'scores', (t) =>
  t.field({
    type: ['JSON'],
    description:
      'Its scores: the ones the graph produced (graphOut port `score`), then one per rescoring, each `{ scorer, value, answer, extracted, target, explanation, config?, rescored? }`.',
    resolve: async (e, _a, ctx) => scoresOf(e.record, await rescoresOf(ctx.outputsDir, e.runId)),
  }),
);

interface RescorePayload {
  runId: string;
  scorer: string;
  rescored: number;
  skipped: number;
}

const RescorePayloadRef = builder.objectRef<RescorePayload>('RescorePayload').implement({
  description: 'A finished rescoring: its entries are in each Episode.scores and its stream in Run.report.',
  fields: (t) => ({
    scorer: t.exposeString('scorer', { description: 'The scorer used.' }),
    rescored: t.exposeInt('rescored', { description: 'Episodes scored again (those with a stored answer).' }),
    skipped: t.exposeInt('skipped', { description: 'Episodes without a stored answer (no score entry), left alone.' }),
    run: t.field({ type: RunRef, description: 'The run, with its report.', resolve: (p, _a, ctx) => loadRun(p.runId, ctx) }),
  }),
});

builder.mutationFields((t) => ({
  rescoreRun: t.field({
    type: RescorePayloadRef,
    description:
      "Scores a finished run's stored answers again with another scorer (no model is called). The original scores are kept; the new ones go to rescores/<scorer>.json (replacing an earlier rescoring with the same scorer) and report.json is rewritten. UNKNOWN_SCORER (listing the known ones) or BAD_USER_INPUT for a bad config before anything is written; CONFLICT while the run is not finished; NOT_FOUND for an unknown run.",
    args: {
      id: t.arg.id({ required: true, description: 'The run id.' }),
      scorer: t.arg.string({ required: true, description: 'A scorer name: choice, exact, f1, includes, numeric, pattern.' }),
      config: t.arg({ type: 'JSON', description: 'The scorer\'s config, e.g. `{"abs_tol": 0.01}` for numeric.' }),
    },
    resolve: async (_root, args, ctx) => {
      const runId = String(args.id);
      const config = (args.config ?? undefined) as Record<string, unknown> | undefined;
      prepareScorer(args.scorer, config);
      await assertRunExists(runId, ctx);
      const { rescore } = await rescoreRunInThread({
        runDir: runDirPath(ctx.outputsDir, runId),
        scorer: args.scorer,
        ...(config ? { config } : {}),
      });
      return { runId, scorer: rescore.scorer, rescored: rescore.episodes.length, skipped: rescore.skipped.length };
    },
  }),
}));

interface ScorerInfo {
  name: string;
  description: string;
  config: Record<string, unknown>;
}

const ScorerRef = builder.objectRef<ScorerInfo>('Scorer').implement({
  description: 'A scorer that `score__<name>` nodes and `rescoreRun` use.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Its name, e.g. `exact`.' }),
    description: t.exposeString('description', { description: 'What counts as correct.' }),
    config: t.field({
      type: 'JSON',
      description: 'Config keys it understands: key → `{ type, default?, description }`.',
      resolve: (s) => s.config,
    }),
  }),
});

builder.queryFields((t) => ({
  scorers: t.field({
    type: [ScorerRef],
    description: 'The scorers, by name.',
    resolve: () => listScorers().map((s) => ({ name: s.name, description: s.description, config: s.config })),
  }),
}));
