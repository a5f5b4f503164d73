/**
 * The scheduler's record of one run, its lifecycle inside the scheduler, and what the modules
 * that start, stop, sample and finalise a job need from the scheduler that owns it.
 */
import type { RunCatalog } from '../../store/catalog.js';
import type { StorageCode } from '../../store/storage-fault.js';
import type { RunSpec, RunSummary } from '../../store/types.js';
import type { SharedHostManager } from '../shared-hosts/shared-host-manager.js';
import type { EvalChild, EvalExit } from './spawn-eval.js';
import type { RemoteRuns } from './remote-runs.js';
import type { ResourceEstimate, SchedulerEvent, SchedulerLogger } from '../types.js';
import type { RunSpan } from '../../tracing/spans.js';

/** A job's lifecycle inside the scheduler (its run's status is in summary.json). */
export const JOB_STATES = [
  /** Waiting in the queue for admission. */
  'queued',
  /** Admitted: its summary says RUNNING and its eval process (or in-process runner) is being started. */
  'starting',
  /** Its eval process or in-process runner is executing; a tick notices when it exits. */
  'running',
  /** Exited and reaped: its final summary, _DONE and catalog row are being written. */
  'finishing',
] as const;
export type JobState = (typeof JOB_STATES)[number];

/** How a job's execution ended, as the reap sees it. */
export type JobExit = { kind: 'process'; exit: EvalExit } | { kind: 'inProcess'; summary: RunSummary } | { kind: 'error'; error: unknown };

export interface Job {
  runId: string;
  runDir: string;
  spec: RunSpec;
  estimate: ResourceEstimate;
  sharedNodesets: string[];
  /** Submission order, the tie-break between equal priorities. */
  order: number;
  state: JobState;
  viaSubprocess: boolean;
  // queued
  skippedSinceMs: number | null;
  waitingReason: string;
  reserving: boolean;
  // running
  startedAt: string | null;
  pid: number | null;
  child: EvalChild | null;
  abort: AbortController | null;
  /** Adopted after a restart: not our child, so its exit is found by polling. */
  adopted: boolean;
  exit: JobExit | null;
  cancelRequested: boolean;
  killTimer: NodeJS.Timeout | null;
  rssMb: number | null;
  peakRssMb: number;
  /** Latest GPU memory of the process tree, MB (null until nvidia-smi reports it). */
  vramMb: number | null;
  peakVramMb: number;
  /** CPU seconds of the process tree at its first and latest sample (null until sampled). */
  cpu: { firstSec: number; firstAtMs: number; lastSec: number; lastAtMs: number } | null;
  overBudget: { rssMb: number; budgetMb: number } | null;
  /** When its eval process was last heard on the IPC channel (performance.now(); its spawn until the first message). */
  heardAtMs: number;
  /** Set when the scheduler killed the run because its eval process stopped answering. */
  hung: { silentMs: number; limitMs: number } | null;
  /** Set when the scheduler stopped the run because its directory went away under it. */
  storageFault: StorageCode | null;
  episodesDone: number;
  summaryMtimeMs: number;
  /** The summary.json last read while it ran: what is known when its dir is deleted. */
  lastSummary: RunSummary | null;
  /** Re-routes an in-process run's calls of a shared nodeset to a restarted host. */
  moveSharedHost: ((nodeset: string, url: string) => void) | null;
  /** The summary as this scheduler last wrote it, while the run is queued (nobody else writes it then). */
  queuedSummary: RunSummary | null;
  finalized: Promise<RunSummary> | null;
  /** The run's span while it runs, when tracing is on (its eval process puts its episodes under it). */
  trace?: RunSpan;
}

/** What the job modules use of the scheduler that runs them. */
export interface JobContext {
  readonly catalog: RunCatalog;
  readonly hosts: SharedHostManager;
  readonly log: SchedulerLogger;
  readonly evalProcessMain: string;
  /** Read at spawn, so it may be set after the server listens. */
  backendUrl(): string;
  /** Between SIGTERM and SIGKILL when stopping a running job. */
  readonly cancelGraceMs: number;
  /** Silence after which an eval process is taken as hung (0: never); its heartbeat period follows from it. */
  readonly evalHungMs: number;
  emit(e: SchedulerEvent): void;
  requestTick(): void;
  /**
   * Final summaries the disk refused (full, read-only, run dir deleted), by run id: the API
   * answers from them, and each tick tries the write again until it lands or the dir is gone.
   */
  readonly unrecorded: Map<string, UnrecordedRun>;
  /** Set with `serve --redis`: admitted runs go to the scale-out workers instead of a local eval process. */
  readonly remote?: RemoteRuns | undefined;
}

export interface UnrecordedRun {
  runDir: string;
  summary: RunSummary;
  /** Whether summary.json already holds `summary` (then only _DONE is missing). */
  summaryOnDisk: boolean;
}

/** Average cores the job's process tree kept busy between its first and latest sample; null before half a second of samples. */
export function cpuCoresOf(job: Pick<Job, 'cpu'>): number | null {
  const c = job.cpu;
  if (!c || c.lastAtMs - c.firstAtMs < 500) return null;
  return Math.max(0, c.lastSec - c.firstSec) / ((c.lastAtMs - c.firstAtMs) / 1000);
}

export function createJob(spec: RunSpec, runDir: string, estimate: ResourceEstimate, shared: string[], order: number): Job {
  return {
    runId: spec.runId,
    runDir,
    spec,
    estimate,
    sharedNodesets: shared,
    order,
    state: 'queued',
    viaSubprocess: spec.viaSubprocess !== false,
    skippedSinceMs: null,
    waitingReason: '',
    reserving: false,
    startedAt: null,
    pid: null,
    child: null,
    abort: null,
    adopted: false,
    exit: null,
    cancelRequested: false,
    killTimer: null,
    rssMb: null,
    peakRssMb: 0,
    vramMb: null,
    peakVramMb: 0,
    cpu: null,
    overBudget: null,
    heardAtMs: 0,
    hung: null,
    storageFault: null,
    episodesDone: 0,
    summaryMtimeMs: 0,
    lastSummary: null,
    queuedSummary: null,
    moveSharedHost: null,
    finalized: null,
  };
}

/** Admission order: priority desc, then submission order. */
export const runsBefore = (a: Job, b: Job): boolean =>
  a.spec.priority > b.spec.priority || (a.spec.priority === b.spec.priority && a.order < b.order);
