/**
 * What every resolver can reach: the services of one running app. Each service is typed by the
 * part of it the API uses, so the schema can be built (and printed) without starting anything.
 */
import type { EndpointUse } from '../core/types.js';
import type { DatasetCatalog } from '../datasets/dataset-catalog.js';
import type { GraphCatalog } from '../graph/graph-catalog.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import type { CatalogRun, ListRunsOptions } from '../store/catalog.js';
import type { RunLabels } from '../spec/run-labels.js';
import type { RunReader } from '../store/run-reader.js';
import type { RunWatcher } from '../store/run-watcher.js';
import type { RunSummary } from '../store/types.js';
import type {
  ActiveJob,
  FrozenSubmit,
  QueueEntry,
  ResourceSnapshot,
  RetryResult,
  SchedulerEvent,
  SubmitInput,
} from '../scheduler/types.js';
import type { ScaleoutHead } from '../scaleout/scaleout-head.js';
import type { ApiPubSub } from './pubsub.js';
import type { PlayRunner } from './play-runner.js';

/** The scheduler as the API uses it. */
export interface SchedulerApi {
  submit(input: SubmitInput, frozen?: FrozenSubmit): Promise<RunSummary>;
  /** Checks a run as submit would (its input, graph and the operator's rules) without queueing it. */
  vet?(input: SubmitInput): Promise<void>;
  cancel(runId: string): Promise<RunSummary>;
  queue(): QueueEntry[];
  activeJobs(): ActiveJob[];
  resources(): ResourceSnapshot;
  acquireInteractiveLock(holder: string): () => void;
  /** Queue changes and run status changes (startEval's waitForRoomSec waits on them). Returns the unsubscribe function. */
  subscribe?(listener: (e: SchedulerEvent) => void): () => void;
  /** Queues a new attempt of a finished run (docs/retry.md). */
  retry?(runId: string, endings?: readonly string[] | null): Promise<RetryResult>;
  /** The model endpoints the shared hosts call, with their live limits. */
  endpoints?(signal?: AbortSignal): Promise<EndpointUse[]>;
  /** A run's final summary that the disk refused (full, read-only, run dir deleted); the API answers from it. */
  unrecordedSummary?(runId: string): RunSummary | undefined;
}

/** The run catalog as the API uses it. */
export interface CatalogApi {
  getRun(id: string): CatalogRun | undefined;
  listRuns(opts?: ListRunsOptions): CatalogRun[];
  countRuns(opts?: Omit<ListRunsOptions, 'offset' | 'first'>): number;
  /** Sets a run's labels after labels.json was written; false for a run it does not know. */
  setLabels(id: string, labels: RunLabels): boolean;
}

/** The nodesets known to the backend. */
export interface NodesetsApi {
  list(): NodesetEntry[] | Promise<NodesetEntry[]>;
}

/** The datasets known to the backend (built-in and workspace). */
export type DatasetsApi = Pick<DatasetCatalog, 'list' | 'entry' | 'index' | 'samples'>;

export interface ApiContext {
  outputsDir: string;
  scheduler: SchedulerApi;
  catalog: CatalogApi;
  graphs: Pick<GraphCatalog, 'list' | 'load'>;
  nodesets: NodesetsApi;
  runs: RunReader;
  watcher: RunWatcher;
  pubsub: ApiPubSub;
  play: PlayRunner;
  /** @default the built-in datasets and those of $ACTIVE_WORKSPACE_DIR */
  datasets?: DatasetsApi;
  /** The URL path an episode's asset is served at. */
  assetUrl(runId: string, index: number, name: string): string;
  /** Aborted when the request or the subscription ends. */
  signal?: AbortSignal;
  /** The scale-out head (`serve --redis`); absent without Redis. */
  scaleout?: ScaleoutApi;
}

/** What the API shows of a scale-out fleet. */
export type ScaleoutApi = Pick<ScaleoutHead, 'workers' | 'shardsOf'>;

export function assetUrlPath(runId: string, index: number, name: string): string {
  return `/runs/${encodeURIComponent(runId)}/episodes/${index}/assets/${encodeURIComponent(name)}`;
}
