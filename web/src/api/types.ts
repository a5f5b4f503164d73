/** The shapes the dashboard reads from the GraphQL API (schema/schema.graphql). */
import type { EpisodeStatus, RunStatus } from '../lib/statuses.js';

export type MetricValue = number | string | boolean;

export interface MetricAggregate {
  name: string;
  mean: number;
  count: number;
  /** null below two episodes. */
  stderr: number | null;
  min: number;
  max: number;
}

export interface RunError {
  code: string;
  message: string;
}

export interface RunRow {
  id: string;
  status: RunStatus;
  graphName: string;
  episodeCount: number;
  workerCount: number;
  episodesDone: number;
  priority: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  aggregateMetrics: MetricAggregate[];
}

export interface TaskAggregate {
  task: string;
  metrics: MetricAggregate[];
}

export interface StatusCount {
  status: EpisodeStatus;
  count: number;
}

export interface RunDetail extends RunRow {
  /** The server's number for this state of the run: the newer of two states has the higher seq. */
  seq: number;
  seed: number;
  timedOut: boolean;
  error: RunError | null;
  aggregateByTask: TaskAggregate[];
  statusCounts: StatusCount[];
}

export interface EpisodeRow {
  index: number;
  episodeId: string;
  status: EpisodeStatus;
  steps: number;
  metrics: Record<string, MetricValue>;
  seed: number;
  workerId: number;
  durationMs: number;
  task: string | null;
  startedAt: string;
  finishedAt: string;
}

export interface Asset {
  name: string;
  mime: string;
  bytes: number;
  url: string;
  nodeId?: string | null;
  step?: number | null;
}

export interface Page<T> {
  total: number;
  items: T[];
}

export interface LogEntry {
  line: number;
  step: number | null;
  nodeId: string | null;
  type: string | null;
  ms: number | null;
  inputs?: unknown;
  outputs?: unknown;
  error?: string | null;
}

export interface LogPage {
  total: number;
  lines: LogEntry[];
}

export interface EpisodeDetail extends EpisodeRow {
  scene: string | null;
  instruction: string | null;
  error: string | null;
  stepBudget: number | null;
  assets: Asset[];
  nodeErrors?: Array<{ nodeId: string; step: number; message: string }> | null;
}

export interface QueueEntry {
  runId: string;
  position: number;
  priority: number;
  graphName: string;
  episodeCount: number;
  workerCount: number;
  createdAt: string;
  exclusiveGpu: boolean;
  waitingReason: string;
  estimate: { ramMb: number; vramMb: number; source: string } | null;
  reserving: boolean;
}

export interface ActiveJob {
  runId: string;
  priority: number;
  pid: number | null;
  graphName: string;
  startedAt: string;
  episodesDone: number;
  episodeCount: number;
  workerCount: number;
  viaSubprocess: boolean;
  exclusiveGpu: boolean;
  rssMb: number | null;
}

export interface Resources {
  ramTotalMb: number;
  ramFreeMb: number;
  vramTotalMb: number | null;
  vramFreeMb: number | null;
  reservedRamMb: number;
  reservedVramMb: number;
  interactiveLockHolder: string | null;
  sampledAt: string;
}

export interface GraphNodeInfo {
  id: string;
  type: string;
  nodeset: string | null;
  config: Record<string, unknown> | null;
}

export interface GraphInfo {
  name: string;
  description: string | null;
  stepBudget: number | null;
  nodes: GraphNodeInfo[];
  edges: Array<{ from: string; to: string; loop: boolean | null }>;
}

export interface NodesetInfo {
  name: string;
  parallelism: string;
  description: string | null;
}

export interface PlayEvent {
  kind: 'STARTED' | 'STEP' | 'FINISHED';
  step: number | null;
  observation: unknown;
  action: unknown;
  metrics: Record<string, MetricValue> | null;
  done: boolean;
  /** FINISHED: how the episode ended. */
  status: EpisodeStatus | null;
  /** The picture (the trajectory so far) as a data URL, when the env drew one. */
  image: string | null;
  /** STARTED: the name the interactive lock is held under. */
  holder: string | null;
  /** FINISHED: the episode record. */
  record: (Partial<EpisodeDetail> & { error?: string }) | null;
}
