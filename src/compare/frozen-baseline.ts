/**
 * A stopWhen run's baseline, frozen into its run directory at submit (baseline-scores.json):
 * per episode the metric values the pairing needs, so the eval process decides when to stop
 * without a server or the baseline's directory, and the decision never changes if the
 * baseline is deleted or rescored later.
 */
import { join } from 'node:path';
import type { MetricRanges } from '../core/types.js';
import { BadInputError } from '../errors.js';
import { readJson, writeJsonAtomic } from '../store/atomic.js';
import { FILES } from '../store/run-files.js';
import type { RunReader } from '../store/run-reader.js';
import type { RunSpec } from '../store/types.js';
import { isTerminalRunStatus, type RunStatus } from '../statuses.js';
import { parseMetricRanges, type ScoreTable } from './episode-scores.js';
import { readRunScores } from './run-scores.js';
import { stopRuleOf } from './stop-rule.js';

/** baseline-scores.json. */
export interface FrozenBaseline {
  runId: string;
  metrics: string[];
  metricRanges?: MetricRanges;
  /** In the baseline's index order: each episode's mean value per metric over its counted plays. */
  episodes: Array<{ episodeId: string; index: number; values: Record<string, number> }>;
}

/** The frozen form of a baseline's score table. */
export function freezeBaseline(runId: string, scores: ScoreTable): FrozenBaseline {
  return {
    runId,
    metrics: [...scores.metrics],
    ...(scores.metricRanges ? { metricRanges: scores.metricRanges } : {}),
    episodes: [...scores.episodes.values()].map((e) => ({ episodeId: e.episodeId, index: e.index, values: Object.fromEntries(e.values) })),
  };
}

/**
 * The baseline a stopWhen spec compares against, read from `reader` and frozen, after the
 * checks a run would otherwise fail on later: NOT_FOUND for a missing run, BAD_USER_INPUT for
 * one still running, a rule naming no metric, or a metric the baseline does not report.
 */
export async function frozenBaselineFor(spec: RunSpec, reader: RunReader, runId: string): Promise<FrozenBaseline> {
  const stopWhen = spec.stopWhen;
  if (!stopWhen) throw new BadInputError('a baseline is frozen only for a run with stopWhen');
  const rule = stopRuleOf(stopWhen, spec.metricRanges);
  const run = await readRunScores(reader, runId);
  if (run.status !== null && !isTerminalRunStatus(run.status as RunStatus))
    throw new BadInputError(`baseline run ${runId} is ${run.status}: compare against a finished run`);
  const metric = rule.kind === 'decided' ? rule.requirement.metric : rule.metric;
  if (!run.scores.metrics.includes(metric))
    throw new BadInputError(
      `baseline run ${runId} reports no metric "${metric}" (it reports ${run.scores.metrics.join(', ') || 'none'}): the early stop pairs on it`,
    );
  return freezeBaseline(runId, run.scores);
}

export async function writeFrozenBaseline(runDir: string, frozen: FrozenBaseline): Promise<void> {
  await writeJsonAtomic(join(runDir, FILES.baselineScores), frozen);
}

/** The frozen baseline as a score table; BAD_USER_INPUT naming the file when it is missing or malformed. */
export async function readFrozenBaseline(runDir: string): Promise<{ runId: string; scores: ScoreTable }> {
  const path = join(runDir, FILES.baselineScores);
  let raw: FrozenBaseline;
  try {
    raw = await readJson<FrozenBaseline>(path);
  } catch (err) {
    throw new BadInputError(`stopWhen compares against a baseline, but ${path} cannot be read (it is written at submit)`, { cause: err });
  }
  if (!raw || typeof raw.runId !== 'string' || !Array.isArray(raw.metrics) || !Array.isArray(raw.episodes))
    throw new BadInputError(`${path} is not a frozen baseline (runId, metrics, episodes)`);
  const episodes: ScoreTable['episodes'] = new Map();
  for (const e of raw.episodes) {
    if (typeof e?.episodeId !== 'string' || typeof e.values !== 'object' || e.values === null) continue;
    const values = new Map(
      Object.entries(e.values).filter((kv): kv is [string, number] => typeof kv[1] === 'number' && Number.isFinite(kv[1])),
    );
    episodes.set(e.episodeId, { episodeId: e.episodeId, index: e.index, values, counted: values.size > 0 });
  }
  const metricRanges = parseMetricRanges(raw.metricRanges);
  return { runId: raw.runId, scores: { episodes, metrics: raw.metrics, ...(metricRanges ? { metricRanges } : {}) } };
}
