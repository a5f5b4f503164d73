/**
 * What a run directory holds: the spec written at submit, the summary rewritten at every
 * episode boundary, and one record per episode.
 */
import type { EpisodeStatus, RunStatus } from '../statuses.js';
import type { AssetRef, MetricValue, NodeErrorEntry } from '../runtime/types.js';

/** spec.json: everything the eval process needs. Never on argv. */
export interface RunSpec {
  runId: string;
  graphName: string;
  episodeCount: number;
  /** @default 1 */
  workerCount: number;
  /** @default 0 */
  seed: number;
  /** API override of the step budget. */
  stepBudget?: number;
  /** Wall-clock seconds allowed per step; timeout = resolved budget × this. @default 2 */
  perStepTimeoutSec?: number;
  /** Wall-clock seconds one host call may go unanswered before its episode ends TIMEOUT. @default 10 × perStepTimeoutSec */
  perCallTimeoutSec?: number;
  /** Higher runs first. @default 0 */
  priority: number;
  /** @default false */
  exclusiveGpu: boolean;
  marginalVramMb?: number;
  /** Stop and fail the run (OUT_OF_BUDGET) when its process tree exceeds this RSS. */
  memoryBudgetMb?: number;
  /** node id → config patch. */
  overrides: Record<string, Record<string, unknown>>;
  /** Env panel cascade: dataset and split; episode index = episodeOffset + i. */
  dataset?: string;
  split?: string;
  /** @default 0 */
  episodeOffset: number;
  /** Workspace overlay whose graphs/ and graph_nodes/ win over built-ins. */
  activeWorkspaceDir?: string;
  /** false: the run executes inside the backend instead of its own eval process. @default true */
  viaSubprocess?: boolean;
  createdAt: string;
}

/** shared_urls.json: nodeset name → URL of a host the backend keeps up. */
export type SharedUrls = Record<string, string>;

export interface EpisodeRecord {
  index: number;
  /** The env's id for this episode (e.g. `gridnav/val/3`). */
  episodeId: string;
  status: EpisodeStatus;
  steps: number;
  metrics: Record<string, MetricValue>;
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
  stepBudget: number;
  error?: string;
  nodeErrors?: NodeErrorEntry[];
  assets: AssetRef[];
}

export interface MetricAggregate {
  name: string;
  mean: number;
  count: number;
  stderr: number;
  min: number;
  max: number;
}

/** summary.json, atomically rewritten with a rising `seq`. */
export interface RunSummary {
  seq: number;
  runId: string;
  status: RunStatus;
  graphName: string;
  episodeCount: number;
  workerCount: number;
  seed: number;
  priority: number;
  episodesDone: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  error: { code: string; message: string } | null;
  aggregateMetrics: MetricAggregate[];
  aggregateByTask: Record<string, MetricAggregate[]>;
  statusCounts: Partial<Record<EpisodeStatus, number>>;
  /** True when any episode ended TIMEOUT: the one result that can depend on machine speed. */
  timedOut: boolean;
  /** Episode records in index order (without their firing logs). */
  episodes: EpisodeRecord[];
  /** Eval process pid while running. */
  pid?: number;
}
