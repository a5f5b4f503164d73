/** Loads the runs a comparison or a power plan needs and hands them to the pure functions in compare/. */
import { BadInputError } from '../errors.js';
import { compareRuns, type RunComparison } from '../compare/compare-runs.js';
import { scoreTable, type ScoreTable } from '../compare/episode-scores.js';
import { powerPlan, sharesEpisodes, type PowerPlan } from '../compare/power-plan.js';
import { isTerminalRunStatus } from '../statuses.js';
import type { ApiContext } from './context.js';
import { loadRun, loadSummary } from './run-source.js';

export interface RunComparisonSource {
  comparison: RunComparison;
}

/** Most candidates one comparison takes. */
export const MAX_CANDIDATES = 50;
/** How many earlier runs of the same graph a power plan looks through for a comparable one. */
const REFERENCE_LOOKBACK = 20;

/** The scores of a run's finished episodes; NOT_FOUND for an unknown run. */
export async function runScores(runId: string, ctx: ApiContext): Promise<{ runId: string; graphName: string; scores: ScoreTable }> {
  const src = await loadRun(runId, ctx);
  const summary = await loadSummary(src, ctx);
  return { runId, graphName: src.row.graphName, scores: scoreTable(summary?.episodes ?? []) };
}

export async function compareRunsById(
  baseline: string,
  candidates: readonly string[],
  metrics: readonly string[] | undefined,
  ctx: ApiContext,
): Promise<RunComparisonSource> {
  if (candidates.length === 0) throw new BadInputError('compareRuns needs at least one candidate run');
  if (candidates.length > MAX_CANDIDATES)
    throw new BadInputError(`compareRuns takes at most ${MAX_CANDIDATES} candidates, got ${candidates.length}`);
  const [base, ...cands] = await Promise.all([baseline, ...candidates].map((id) => runScores(id, ctx)));
  return { comparison: compareRuns(base!, cands, metrics) };
}

export async function powerPlanById(
  runId: string,
  effect: number | undefined,
  metrics: readonly string[] | undefined,
  ctx: ApiContext,
): Promise<PowerPlan> {
  if (effect !== undefined && (!Number.isFinite(effect) || effect === 0))
    throw new BadInputError(`effect must be a non-zero number, got ${effect}`);
  const run = await runScores(runId, ctx);
  // The newest other finished run of the same graph that shares episodes with this one.
  let reference: { runId: string; scores: ScoreTable } | undefined;
  const rows = ctx.catalog.listRuns({ graphName: run.graphName }).filter((r) => r.id !== runId && isTerminalRunStatus(r.status));
  for (const row of rows.slice(0, REFERENCE_LOOKBACK)) {
    const other = await runScores(row.id, ctx);
    if (sharesEpisodes(run.scores, other.scores)) {
      reference = other;
      break;
    }
  }
  return powerPlan(run, reference, { effect, metrics });
}
