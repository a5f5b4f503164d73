/** Loads the runs a comparison or a power plan needs and hands them to the pure functions in compare/. */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BadInputError } from '../errors.js';
import { assertRunId, FILES } from '../store/run-dir.js';
import { assertDistinctRuns, compareRuns, type RunComparison } from '../compare/compare-runs.js';
import { scoreTable, scoreTableFromSummaryJson, type ScoreTable } from '../compare/episode-scores.js';
import { powerPlan, isPowerReference, type PowerPlan } from '../compare/power-plan.js';
import { readScoreIndex, writeScoreIndex } from '../compare/score-index.js';
import { isTerminalRunStatus, type RunStatus } from '../statuses.js';
import type { ApiContext } from './context.js';
import { loadRun, loadSummary, sourceFromRow, type RunSource } from './run-source.js';

export interface RunComparisonSource {
  comparison: RunComparison;
}

/** Most candidates one comparison takes. */
export const MAX_CANDIDATES = 50;
/** How many earlier runs of the same graph a power plan looks through for a comparable one. */
const REFERENCE_LOOKBACK = 20;

interface CachedScores {
  mtimeMs: number;
  size: number;
  graphName: string;
  scores: ScoreTable;
}

/** Score tables by summary.json path (one server may serve one outputs folder, tests run several), while the file keeps its mtime and size (a finished run's never changes). */
const cache = new Map<string, CachedScores>();
const CACHE_RUNS = 16;

/** The scores of a run's finished episodes; NOT_FOUND for an unknown run. */
export async function runScores(runId: string, ctx: ApiContext): Promise<{ runId: string; graphName: string; scores: ScoreTable }> {
  assertRunId(runId);
  if (!ctx.scheduler.unrecordedSummary?.(runId)) {
    const dir = ctx.runs.runDir(runId);
    const path = join(dir, FILES.summary);
    const st = await stat(path).catch(() => null);
    if (st) {
      const stamp = { mtimeMs: st.mtimeMs, size: st.size };
      const hit = cache.get(path);
      if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return { runId, graphName: hit.graphName, scores: hit.scores };
      const remember = (found: { graphName: string; scores: ScoreTable }) => {
        cache.delete(path);
        cache.set(path, { ...stamp, ...found });
        if (cache.size > CACHE_RUNS) cache.delete(cache.keys().next().value!);
        return { runId, ...found };
      };
      // The run's score index, when it was built from summary.json as it is now: a tenth of the file to parse, and no record objects.
      const indexed = await readScoreIndex(dir, runId, stamp);
      if (indexed) return remember({ graphName: indexed.graphName, scores: indexed.scores });
      let json: unknown = null;
      try {
        json = JSON.parse(await readFile(path, 'utf8'));
      } catch {
        // Unreadable or not JSON: the checked path below says what there is.
      }
      const fast = scoreTableFromSummaryJson(json, runId);
      if (fast) {
        // A finished run without an index (written before indexes, or its summary rewritten since): build it for the next cold read.
        const status = (json as { status?: unknown }).status;
        if (typeof status === 'string' && isTerminalRunStatus(status as RunStatus))
          void writeScoreIndex(dir, { runId, graphName: fast.graphName, status }, fast.scores, stamp).catch(() => {});
        return remember(fast);
      }
    }
  }
  const src = await loadRun(runId, ctx);
  const summary = await loadSummary(src, ctx);
  return { runId, graphName: src.row.graphName, scores: scoreTable(summary?.episodes ?? [], summary?.metricRanges) };
}

/** A run for a field of a comparison: the catalog's row when it has one (cheap), else read. */
export function runSource(runId: string, ctx: ApiContext): RunSource | Promise<RunSource> {
  const row = ctx.catalog.getRun(runId);
  return row ? sourceFromRow(row) : loadRun(runId, ctx);
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
  assertDistinctRuns([baseline, ...candidates].map((runId) => ({ key: runId, runId })));
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
  // The newer other finished runs of the same graph that share episodes with this one and score one differently; each metric picks its own among them.
  const references: { runId: string; scores: ScoreTable }[] = [];
  const rows = ctx.catalog.listRuns({ graphName: run.graphName }).filter((r) => r.id !== runId && isTerminalRunStatus(r.status));
  for (const row of rows.slice(0, REFERENCE_LOOKBACK)) {
    const other = await runScores(row.id, ctx);
    if (isPowerReference(run.scores, other.scores)) references.push(other);
  }
  return powerPlan(run, references, { effects: effect !== undefined ? { '*': { value: effect, relative: false } } : undefined, metrics });
}
