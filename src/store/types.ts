/**
 * What a run directory holds: the spec written at submit, the summary rewritten at every
 * episode boundary, and one record per episode.
 */
import type { EpisodeStatus, RunStatus } from '../statuses.js';
import type { AssetRef, DroppedMetric, MetricGoal, MetricRanges, MetricValue, NodeErrorEntry } from '../core/types.js';
import type { ScoreEntry } from '../core/score-entry.js';
import type { ReportedModel } from './reported-models.js';

export type { ScoreEntry, ScoreTarget } from '../core/score-entry.js';

/** spec.json: its schema, fields, defaults and limits are in spec/run-spec.ts. */
export type { RunSpec } from '../spec/run-spec.js';

/** shared_urls.json: nodeset name → URL of a host the backend keeps up. */
export type SharedUrls = Record<string, string>;

export interface EpisodeRecord {
  index: number;
  /** The env's id for this episode (e.g. `gridnav/val/3`). */
  episodeId: string;
  status: EpisodeStatus;
  steps: number;
  metrics: Record<string, MetricValue>;
  /**
   * Metrics a graphOut received as NaN or ±Infinity, which the episode does not report (each
   * aggregate counts it under `excluded`): the name, the value, the node and iteration that sent it.
   * Absent when none.
   */
  droppedMetrics?: DroppedMetric[];
  /** Derived from (run seed, index). */
  seed: number;
  /** Timing/placement fields: the only ones allowed to differ between worker counts. */
  workerId: number;
  durationMs: number;
  startedAt: string;
  finishedAt: string;
  task?: string;
  scene?: string;
  instruction?: string;
  /** The dataset sample the episode played (dataset envs). */
  sampleId?: string;
  /** The sample's group (`metadata.cluster`), for per-group and clustered statistics. */
  cluster?: string;
  /** Which play (0-based) of its episode this is, on a run with repeats > 1; the K plays share episodeId. */
  repeat?: number;
  stepBudget: number;
  error?: string;
  nodeErrors?: NodeErrorEntry[];
  assets: AssetRef[];
  /** Scores from graphOut ports named `score`, one per scorer (absent when the graph scores nothing). */
  scores?: ScoreEntry[];
  /** What the providers said answered this episode's model calls (store/reported-models.ts); absent when no call reported a model. */
  reportedModels?: ReportedModel[];
  /**
   * The episode's OpenTelemetry trace and span, when the run was traced (docs/tracing.md): links,
   * like the timing fields, that differ between two runs of the same spec.
   */
  traceId?: string;
  spanId?: string;
}

/** How a metric's 95 % interval was computed (docs/statistics.md). */
export type CiMethod = 't' | 'wilson' | 'clustered-t' | 'clustered-logit-t';

export interface MetricAggregate {
  name: string;
  mean: number;
  count: number;
  stderr: number;
  min: number;
  max: number;
  /** 95 % interval of the mean; absent in summaries written before intervals existed. */
  ci95Low?: number;
  ci95High?: number;
  ciMethod?: CiMethod;
  /** Every value was 0 or 1 and the declared range (RunSummary.metricRanges) allows a rate: a success rate. */
  binary?: boolean;
  /** Distinct clusters among the counted episodes, when episodes carry one. */
  clusters?: number;
  /** Cluster-robust standard error (C−1 df), when episodes carry a cluster. */
  clusteredStderr?: number;
  /** Which way is better, as the run declares it (RunSummary.metricRanges); absent when undeclared. */
  goal?: MetricGoal;
  /** The run's primary metric: listed first. */
  primary?: boolean;
  /** Episodes left out of this metric, by ending (an excluded ending, or the metric not reported). */
  excluded?: Record<string, number>;
  /**
   * Counted plays that never produced this metric and scored its declared `missing` value (a
   * scorer's 0 for an unanswered sample), by ending; absent when none did. They are in `count`.
   */
  imputed?: Record<string, number>;
  /** The declared `missing` value those plays scored; present with `imputed`. */
  imputedValue?: number;
  /**
   * On a run with repeats: the mean plays per episode behind this metric, and the variance
   * components (one-way random effects): between episodes (σ²_b) and within an episode
   * across its plays (σ²_w). Var(mean) ≈ σ²_b/n + σ²_w/(n·K). `count` is then episodes, not plays.
   */
  repeats?: number;
  betweenVar?: number;
  withinVar?: number;
}

/** summary.json, atomically rewritten with a rising `seq`. */
export interface RunSummary {
  seq: number;
  runId: string;
  status: RunStatus;
  graphName: string;
  /** Plays the run will have: the spec's episodeCount × repeats (= episodes without repeats). */
  episodeCount: number;
  /** Plays of each episode, when more than one (docs/statistics.md, Repeats). */
  repeats?: number;
  workerCount: number;
  seed: number;
  priority: number;
  episodesDone: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  error: { code: string; message: string } | null;
  /** The declared range of each metric (the spec's, frozen at submit): the aggregates' intervals stay inside them. */
  metricRanges?: MetricRanges;
  aggregateMetrics: MetricAggregate[];
  aggregateByTask: Record<string, MetricAggregate[]>;
  statusCounts: Partial<Record<EpisodeStatus, number>>;
  /** True when any episode ended TIMEOUT: the one result that can depend on machine speed. */
  timedOut: boolean;
  /** Episode records in index order (without their firing logs). */
  episodes: EpisodeRecord[];
  /**
   * Workers that stopped early because their env host could not be started (again): the others
   * played their episodes, so results are unchanged and only speed was lost. Absent when none did.
   * A placement field, like the timings.
   */
  retiredWorkers?: RetiredWorker[];
  /** A run with stopWhen: where its anytime-valid interval stands, and once it stopped, why and at which episode. */
  stopWhen?: StopWhenState;
  /** Eval process pid while running. */
  pid?: number;
  /**
   * Set by readers only, never in summary.json: the run's summary.json was changed after the
   * run finished, so this is the state recorded at its finish, with the episode records on disk
   * (store/summary-digest.ts).
   */
  summaryModified?: true;
}

/** A stopWhen run's watch (eval-process/early-stop.ts), read over the completed prefix of its hand-out order. */
export interface StopWhenState {
  /** `decided` or `halfwidth<=x`. */
  rule: string;
  metric: string;
  /** The requirement a `decided` rule judges (`success > 0`); null for a half-width rule. */
  requirement: string | null;
  /** The baseline's run id; null when the run watches its own mean. */
  against: string | null;
  /** Records of the prefix read. */
  read: number;
  /** The anytime-valid interval after the prefix: of candidate − baseline, or of the run's own mean. */
  interval: [number, number] | null;
  /** A `decided` rule's verdict so far (inconclusive while it goes on); null for a half-width rule. */
  verdict: 'pass' | 'fail' | 'inconclusive' | null;
  /** The interval's path as the prefix grew: [records read, low, high], thinned to at most 200 points. */
  path: Array<[number, number, number]>;
  /** Set once it stopped (or read its whole budget). */
  stopped: {
    reason: 'decided' | 'halfwidth' | 'budget';
    /** The prefix length it stopped at. */
    atEpisode: number;
    /** The plan's episodes (the budget). */
    planned: number;
    /** planned − atEpisode: episodes not played. */
    saved: number;
    /** Episodes a fixed-n plan would have needed for the same answer, from the values read; null where they cannot say. */
    fixedNPlan: number | null;
  } | null;
}

export interface RetiredWorker {
  workerId: number;
  /** Why, in words: which host start failed and its error. */
  reason: string;
}
