/**
 * The evaluation report of a run (`report.json`): metrics with their error bars, the rate of
 * each ending and of infrastructure failures, per scorer the mean and (for label targets) the
 * classification table and confusion matrix, the worst and best episodes, cost per
 * episode, and the models the run asked and was answered by. Built from summary.json and the rescorings, in episode-index order only, so equal
 * runs give equal reports whatever their worker count.
 */
import { join } from 'node:path';
import { classify, looksLikeLabels, type ClassificationReport } from '../scoring/classification.js';
import { UNSCORED_ENDINGS, type EpisodeStatus } from '../statuses.js';
import { summarizeValues } from './aggregate.js';
import { orderAggregates } from '../compare/metric-order.js';
import { writeJsonAtomic } from './atomic.js';
import { readRescores, type RescoreFile } from './rescores.js';
import { readSpec, readSummary } from './run-dir.js';
import { readRunManifest } from './run-manifest.js';
import { runModelsOf, type RunModel } from './run-models.js';
import { repeatsOf } from '../spec/repeats.js';
import { currentAttemptOf, readAttempts, retriedEpisodesOf, type AttemptsFile, type RetriedEpisodeReport } from './attempts.js';
import type { EpisodeRecord, MetricAggregate, RunSummary, ScoreEntry, ScoreTarget } from './types.js';

export const REPORT_FILE = 'report.json';

/** An infrastructure failure (a model endpoint that never answered): reported apart, never a wrong answer. */
export const INFRA_STATUS = 'INFRA_ERROR';
/** Endings whose episodes are left out of the scores: not the agent's doing. */
const NOT_SCORED: ReadonlySet<string> = new Set(UNSCORED_ENDINGS);
/** Endings that count as failed episodes. */
const FAILED: ReadonlySet<string> = new Set(['ERROR', 'CRASHED', 'TIMEOUT']);
/** Per-episode cost metrics, reported when the graph emits them. */
const COST_METRICS = ['llm_calls', 'prompt_tokens', 'completion_tokens', 'llm_latency_ms', 'llm_retries', 'llm_cache_hits'];
/** Scorers whose verdict is a class (numeric and f1 measure closeness: a repeated number is no label). */
const CATEGORICAL_SCORERS: ReadonlySet<string> = new Set(['exact', 'includes', 'pattern', 'choice']);
/** Episodes listed at each end of the ranking. */
export const EXTREMES = 5;

export interface EndingRate {
  status: string;
  count: number;
  /** count ÷ episodes done. */
  rate: number;
}

export interface ScorerReport {
  scorer: string;
  /** True for a rescoring made after the run. */
  rescored: boolean;
  config?: Record<string, unknown>;
  /** Counted plays (INFRA_ERROR and CANCELLED ones left out), the unanswered among them. */
  count: number;
  /** Over every counted play, an unanswered one scoring 0 (docs/statistics.md, Which plays count). */
  mean: number | null;
  stderr: number | null;
  /** Plays scoring 1. */
  correct: number;
  /** correct ÷ count: an unanswered play is a wrong one. */
  accuracy: number | null;
  /** Counted plays that ended without a score (ran out of budget or time, errored, gave no answer): in `count` at 0. */
  unanswered: number;
  /** Present when the targets are labels. */
  classification?: ClassificationReport;
}

export interface EpisodeBrief {
  index: number;
  episodeId: string;
  status: EpisodeStatus;
  score: number;
  answer: string | null;
  extracted: string | null;
  target: ScoreTarget | null;
  explanation: string;
}

export interface CostReport {
  metric: string;
  /** Mean per episode over the episodes that report it. */
  mean: number;
  total: number;
  count: number;
}

export interface RunReport {
  runId: string;
  graphName: string;
  status: RunSummary['status'];
  /** Why the run did not complete (FAILED, ABORTED), as summary.json says: e.g. INFRA_ERRORS naming the first error. */
  error?: { code: string; message: string };
  episodeCount: number;
  episodesDone: number;
  /** The run's aggregates as summary.json has them (mean, stderr, and whatever error bars it carries). */
  metrics: MetricAggregate[];
  endings: EndingRate[];
  infrastructureFailures: { count: number; rate: number };
  /** ERROR, CRASHED and TIMEOUT episodes. */
  failed: number;
  /** Episodes with llm_retries > 0, and the retries summed (0 when the graph reports none). */
  retried: { episodes: number; retries: number };
  /** The first is the primary: the record's first scorer. */
  scorers: ScorerReport[];
  /** By the primary scorer, episodes scoring below 1: lowest first (ties by index), EXTREMES at most. */
  worst: EpisodeBrief[];
  /** By the primary scorer, episodes scoring above 0: highest first (ties by index), EXTREMES at most. */
  best: EpisodeBrief[];
  /** llm_calls, tokens … per episode where the graph emits them, then `durationMs` and `steps`. */
  perEpisode: CostReport[];
  /** On a retried run (docs/retry.md): the attempt it is on, and every episode a retry played, with its earlier endings. */
  attempt?: number;
  retriedEpisodes?: RetriedEpisodeReport[];
  /** Each model-backed node: the model, endpoint and sampling frozen at submit, what the provider said answered, and on a run with repeats what they are worth. */
  models?: RunModel[];
}

const rate = (n: number, d: number): number => (d === 0 ? 0 : n / d);
const finiteOrNull = (v: number): number | null => (Number.isFinite(v) ? v : null);

interface Stream {
  scorer: string;
  rescored: boolean;
  config?: Record<string, unknown>;
  /** Per counted record (index order): its entry or undefined. */
  entries: Array<{ record: EpisodeRecord; entry: ScoreEntry | undefined }>;
}

/** The metric a scorer reports its value under (nodesets/score), which names its line when no play was scored. */
const SCORE_METRIC = 'score';

/**
 * The score streams: the records' own entries by position (named after the first scorer seen
 * there), then each rescoring. When no counted play has an entry but the run declares a `score`
 * metric (its scorer never ran: every play out of budget), one stream of unanswered plays under
 * that name, so the report still has its line, at 0.
 */
function streamsOf(records: readonly EpisodeRecord[], rescores: readonly RescoreFile[], summary: RunSummary): Stream[] {
  const width = Math.max(0, ...records.map((r) => r.scores?.length ?? 0));
  const streams: Stream[] = [];
  if (width === 0 && records.length > 0 && typeof summary.metricRanges?.[SCORE_METRIC]?.missing === 'number') {
    streams.push({ scorer: SCORE_METRIC, rescored: false, entries: records.map((record) => ({ record, entry: undefined })) });
  }
  for (let k = 0; k < width; k++) {
    const first = records.find((r) => r.scores?.[k])!.scores![k]!;
    streams.push({
      scorer: first.scorer,
      rescored: false,
      ...(first.config ? { config: first.config } : {}),
      entries: records.map((record) => ({ record, entry: record.scores?.[k] })),
    });
  }
  for (const f of rescores) {
    const byIndex = new Map(f.episodes.map((e) => [e.index, e.score]));
    streams.push({
      scorer: f.scorer,
      rescored: true,
      ...(Object.keys(f.config).length ? { config: f.config } : {}),
      entries: records.map((record) => ({ record, entry: byIndex.get(record.index) })),
    });
  }
  return streams;
}

const SCORE_RANGE = { min: 0, max: 1 };

/** What a counted play without a score entry scores: a scorer's declared missing value (nodesets/score). */
const UNANSWERED_SCORE = 0;

function scorerReport(s: Stream): ScorerReport {
  const scored = s.entries.filter((e): e is { record: EpisodeRecord; entry: ScoreEntry } => e.entry !== undefined);
  const values = s.entries.map((e) => e.entry?.value ?? UNANSWERED_SCORE);
  // A score entry's value is in [0, 1] (its schema), so its interval is too.
  const agg = values.length ? summarizeValues(s.scorer, values, undefined, undefined, SCORE_RANGE) : undefined;
  const correct = values.filter((v) => v === 1).length;
  const out: ScorerReport = {
    scorer: s.scorer,
    rescored: s.rescored,
    ...(s.config ? { config: s.config } : {}),
    count: values.length,
    mean: agg ? finiteOrNull(agg.mean) : null,
    stderr: agg ? finiteOrNull(agg.stderr) : null,
    correct,
    accuracy: values.length ? correct / values.length : null,
    unanswered: values.length - scored.length,
  };
  const entries = scored.map((e) => e.entry);
  if (CATEGORICAL_SCORERS.has(s.scorer) && looksLikeLabels(entries)) out.classification = classify(entries);
  return out;
}

function brief(record: EpisodeRecord, e: ScoreEntry): EpisodeBrief {
  return {
    index: record.index,
    episodeId: record.episodeId,
    status: record.status,
    score: e.value,
    answer: e.answer,
    extracted: e.extracted,
    target: e.target,
    explanation: e.explanation,
  };
}

function costs(records: readonly EpisodeRecord[]): CostReport[] {
  const out: CostReport[] = [];
  const add = (metric: string, values: number[]) => {
    if (values.length === 0) return;
    const total = values.reduce((a, b) => a + b, 0);
    out.push({ metric, mean: total / values.length, total, count: values.length });
  };
  for (const m of COST_METRICS) {
    add(
      m,
      records.flatMap((r) => {
        const v = r.metrics[m];
        return typeof v === 'number' && Number.isFinite(v) ? [v] : [];
      }),
    );
  }
  add(
    'durationMs',
    records.map((r) => r.durationMs),
  );
  add(
    'steps',
    records.map((r) => r.steps),
  );
  return out;
}

/** The report of `summary` with its rescorings. */
export function buildReport(
  summary: RunSummary,
  rescores: readonly RescoreFile[] = [],
  attempts: AttemptsFile | null = null,
  models: readonly RunModel[] = [],
): RunReport {
  const records = [...summary.episodes].sort((a, b) => a.index - b.index);
  const done = records.length;
  const counted = records.filter((r) => !NOT_SCORED.has(r.status));
  const streams = streamsOf(counted, rescores, summary);
  const primary = streams[0];
  const ranked = primary ? primary.entries.flatMap((e) => (e.entry ? [brief(e.record, e.entry)] : [])) : [];
  const worst = ranked
    .filter((e) => e.score < 1)
    .sort((a, b) => a.score - b.score || a.index - b.index)
    .slice(0, EXTREMES);
  const best = ranked
    .filter((e) => e.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, EXTREMES);
  const counts = summary.statusCounts as Record<string, number | undefined>;
  const infra = counts[INFRA_STATUS] ?? 0;
  const retries = records.map((r) => r.metrics.llm_retries).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return {
    runId: summary.runId,
    graphName: summary.graphName,
    status: summary.status,
    ...(summary.error ? { error: { code: summary.error.code, message: summary.error.message } } : {}),
    episodeCount: summary.episodeCount,
    episodesDone: summary.episodesDone,
    metrics: orderAggregates(summary.aggregateMetrics),
    endings: Object.keys(counts)
      .sort()
      .map((status) => ({ status, count: counts[status] ?? 0, rate: rate(counts[status] ?? 0, done) })),
    infrastructureFailures: { count: infra, rate: rate(infra, done) },
    failed: records.filter((r) => FAILED.has(r.status)).length,
    retried: { episodes: retries.filter((v) => v > 0).length, retries: retries.reduce((a, b) => a + b, 0) },
    scorers: streams.map(scorerReport),
    worst,
    best,
    perEpisode: costs(records),
    ...(attempts && attempts.attempts.length > 1
      ? { attempt: currentAttemptOf(attempts), retriedEpisodes: retriedEpisodesOf(attempts, records) }
      : {}),
    ...(models.length > 0 ? { models: [...models] } : {}),
  };
}

/** The run's models from its spec and manifest; none when either is unreadable (the report is still written). */
export async function readRunModels(runDir: string): Promise<RunModel[]> {
  const spec = await readSpec(runDir).catch(() => null);
  if (!spec?.models) return [];
  const manifest = await readRunManifest(runDir);
  const cacheOf = (node: string): unknown => spec.graph?.nodes.find((n) => n.id === node)?.config?.cache;
  return runModelsOf(spec.models, manifest?.reportedModels, repeatsOf(spec), cacheOf);
}

/** Builds the run's report from its files and writes `report.json` (atomically); returns it. */
export async function writeReport(runDir: string, summary?: RunSummary): Promise<RunReport> {
  const report = buildReport(
    summary ?? (await readSummary(runDir)),
    await readRescores(runDir),
    await readAttempts(runDir),
    await readRunModels(runDir),
  );
  await writeJsonAtomic(join(runDir, REPORT_FILE), report);
  return report;
}
