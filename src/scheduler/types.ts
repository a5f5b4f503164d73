/**
 * The scheduler's public face, used by the GraphQL resolvers and the dashboard.
 */
import type { GraphSpec } from '../core/types.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import type { RunSummary } from '../store/types.js';
import type { RetriedEpisode } from '../store/attempts.js';
import type { GpuMemory } from './admission/nvidia-smi.js';

/** What `startEval` accepts: the run-spec schema's input (spec/run-spec.ts). */
export type { RunInputFields as SubmitInput } from '../spec/run-spec.js';

/**
 * A submit that re-plays an earlier run (a determinism audit): its frozen graph is evaluated as
 * it is (the graph file is not read again, the overrides are not applied twice).
 */
export interface FrozenSubmit {
  graph: GraphSpec;
  /** Written into the spec: the audited run and the run indices to play. */
  audit?: { of: string; indices: number[] };
  /** Called with the nodesets the graph uses before anything is written (a manifest check); throws to refuse. */
  check?: (nodesets: readonly NodesetEntry[], workspaceDir: string | undefined) => Promise<void>;
}

export type EstimateSource = 'calibrated' | 'declared' | 'marginal' | 'default';

export interface ResourceEstimate {
  ramMb: number;
  vramMb: number;
  source: EstimateSource;
  /** CPU cores the run keeps busy: measured on earlier runs of its graph, else declared (absent: not counted). */
  cores?: number;
  /** Where the core figure came from. */
  coresSource?: 'calibrated' | 'declared';
}

export interface QueueEntry {
  runId: string;
  /** 1-based position in admission order (priority desc, then FIFO). */
  position: number;
  priority: number;
  graphName: string;
  episodeCount: number;
  workerCount: number;
  createdAt: string;
  exclusiveGpu: boolean;
  /** Why it has not started yet, in words. */
  waitingReason: string;
  estimate: ResourceEstimate;
  /** Set once the job has waited long enough to reserve its resources against smaller jobs. */
  reserving: boolean;
}

export interface ActiveJob {
  runId: string;
  priority: number;
  pid: number | null;
  graphName: string;
  startedAt: string;
  /** A cancel was asked for: its eval process is stopping its episodes and will end the run CANCELLED. */
  cancelRequested: boolean;
  episodesDone: number;
  episodeCount: number;
  workerCount: number;
  viaSubprocess: boolean;
  exclusiveGpu: boolean;
  reservation: ResourceEstimate;
  /** Latest RSS of the process tree, MB. */
  rssMb: number | null;
  /** Latest GPU memory of the process tree (nvidia-smi's compute processes), MB; null where not measured. */
  vramMb: number | null;
}

export interface ResourceSnapshot {
  ramTotalMb: number;
  ramFreeMb: number;
  /** null where no GPU could be measured (then the static ledger applies). */
  vramTotalMb: number | null;
  vramFreeMb: number | null;
  reservedRamMb: number;
  reservedVramMb: number;
  ramMeasured: boolean;
  vramMeasured: boolean;
  /** Each GPU measured (empty where none was). */
  gpus: GpuMemory[];
  /** Who holds the interactive lock (a live Play session), if anyone. */
  interactiveLockHolder: string | null;
  sampledAt: string;
}

export type SchedulerEvent = { type: 'queue' } | { type: 'run'; runId: string; summary: RunSummary };

/** Where the scheduler writes what it does (console-compatible). */
export interface SchedulerLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** A shared nodeset host the backend keeps up for queued and running runs. */
export interface SharedHostStatus {
  nodeset: string;
  url: string | null;
  pid: number | null;
  /** Run ids holding a reference. */
  holders: string[];
  /** Set while no run holds it: the unload happens sharedHostIdleMs later. */
  idleSince: string | null;
  restarts: number;
}

/** A queued retry: the run's summary as queued, the attempt's number and the episodes it plays again. */
export interface RetryResult {
  summary: RunSummary;
  attempt: number;
  retried: RetriedEpisode[];
}
