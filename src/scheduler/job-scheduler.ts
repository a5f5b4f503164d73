/**
 * JobScheduler: the backend's queue of runs. `submit` only queues; a tick (reap → admit →
 * drain pending unloads, every second and right after a submit, a cancel or a child's exit)
 * starts what fits, each run in its own eval process (or in this process when the run asks).
 */
import { createWriteStream, existsSync, mkdirSync, type WriteStream } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BadInputError, ConflictError, EvalError, NotFoundError, QueueFullError, errorMessage } from '../errors.js';
import { EVAL_PROCESS_MAIN } from '../paths.js';
import { spawnHost } from '../runtime/host-process.js';
import { isTerminalRunStatus } from '../statuses.js';
import { writeJsonAtomic } from '../store/atomic.js';
import { catalogRunFromSummary, readProcessRecord, RunCatalog } from '../store/catalog.js';
import {
  createRunDir,
  FILES,
  assertRunId,
  isDone,
  readSummary,
  runDirPath,
  touchDone,
  writeSharedUrls,
  writeSpec,
  writeSummary,
} from '../store/run-dir.js';
import type { RunSpec, RunSummary } from '../store/types.js';
import { planAdmission, type AdmissionCandidate } from './admission.js';
import { estimateRun } from './estimate.js';
import { isEvalProcessOf, scanUnfinishedRuns, type UnfinishedRun } from './recovery.js';
import { isPidAlive, ResourceSampler, type ResourceSample, type ResourceSource } from './resource-sampler.js';
import { initialSummary } from '../eval-process/summary-writer.js';
import { inspectRunGraph } from './run-graph.js';
import { SharedHostManager } from './shared-host-manager.js';
import { groupAlive, signalGroup, spawnEvalProcess, type EvalChild, type EvalExit } from './spawn-eval.js';
import { checkSubmitInput } from './submit-input.js';
import type {
  ActiveJob,
  BackendToEvalMessage,
  QueueEntry,
  ResourceEstimate,
  ResourceSnapshot,
  SchedulerEvent,
  SchedulerLogger,
  SharedHostStatus,
  SubmitInput,
} from './types.js';

export interface JobSchedulerOptions {
  /** Holds `eval_runs/` and the catalog `db.json`. */
  outputsDir: string;
  /** The backend's own URL, handed to each eval process (read at spawn, so it may be set after listen). */
  backendUrl: () => string;
  /** Queued runs accepted before submit fails with QUEUE_FULL. @default 1000 */
  queueCapacity?: number;
  /** Period of the tick; ticks also run right after a submit, a cancel and a child's exit. @default 1000 */
  tickIntervalMs?: number;
  /** A job passed over for this long reserves its resources, so later smaller jobs cannot starve it. @default 60000 */
  starvationMs?: number;
  /** Between SIGTERM and SIGKILL when cancelling a running run. @default 5000 */
  cancelGraceMs?: number;
  /** How long a shared host with no run using it stays loaded. @default 60000 */
  sharedHostIdleMs?: number;
  /** Capacity of the static ledger, used for a resource that cannot be measured (e.g. VRAM without an NVIDIA GPU). @default none: not a constraint */
  staticCapacity?: { ramMb?: number; vramMb?: number };
  /** Free RAM/VRAM and process-tree RSS. @default new ResourceSampler() */
  sampler?: ResourceSource;
  /** How often the RSS of each running eval process tree is sampled (calibration, memory budgets). @default 1000 */
  rssSampleIntervalMs?: number;
  /** The compiled eval process entry. @default EVAL_PROCESS_MAIN */
  evalProcessMain?: string;
  /** Workspace overlay for graphs and nodesets. @default process.env.ACTIVE_WORKSPACE_DIR */
  workspaceDir?: string;
  /** Built-in graphs folder. @default BUILTIN_GRAPHS_DIR */
  builtinGraphsDir?: string;
  /** Built-in nodesets folder. @default BUILTIN_NODESETS_DIR */
  builtinNodesetsDir?: string;
  /** @default lines on stderr prefixed `[scheduler]` */
  logger?: SchedulerLogger;
}

type JobState = 'queued' | 'starting' | 'running' | 'finishing';

type JobExit = { kind: 'process'; exit: EvalExit } | { kind: 'inProcess'; summary: RunSummary } | { kind: 'error'; error: unknown };

interface Job {
  runId: string;
  runDir: string;
  spec: RunSpec;
  estimate: ResourceEstimate;
  sharedNodesets: string[];
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
  overBudget: { rssMb: number; budgetMb: number } | null;
  episodesDone: number;
  summaryMtimeMs: number;
  /** Re-routes an in-process run's calls of a shared nodeset to a restarted host. */
  moveSharedHost: ((nodeset: string, url: string) => void) | null;
  /** The summary as this scheduler last wrote it, while the run is queued (nobody else writes it then). */
  queuedSummary: RunSummary | null;
  finalized: Promise<RunSummary> | null;
}

const defaultLogger: SchedulerLogger = {
  info: (m) => process.stderr.write(`[scheduler] ${m}\n`),
  warn: (m) => process.stderr.write(`[scheduler] warning: ${m}\n`),
  error: (m) => process.stderr.write(`[scheduler] error: ${m}\n`),
};

/** Admission order: priority desc, then submission order. */
const before = (a: Job, b: Job): boolean =>
  a.spec.priority > b.spec.priority || (a.spec.priority === b.spec.priority && a.order < b.order);

export class JobScheduler {
  readonly outputsDir: string;
  private readonly opts: Required<
    Pick<JobSchedulerOptions, 'queueCapacity' | 'tickIntervalMs' | 'starvationMs' | 'cancelGraceMs' | 'sharedHostIdleMs' | 'rssSampleIntervalMs' | 'evalProcessMain'>
  >;
  private readonly backendUrl: () => string;
  private readonly staticCapacity: { ramMb?: number; vramMb?: number };
  private readonly sampler: ResourceSource;
  private readonly workspaceDir: string | undefined;
  private readonly builtinGraphsDir: string | undefined;
  private readonly builtinNodesetsDir: string | undefined;
  private readonly log: SchedulerLogger;
  private readonly hosts: SharedHostManager;
  private catalogRef: RunCatalog | null = null;

  /** Queued jobs in admission order. */
  private readonly queued: Job[] = [];
  private readonly running = new Map<string, Job>();
  private readonly finishing = new Map<string, Job>();
  private readonly listeners = new Set<(e: SchedulerEvent) => void>();
  private readonly locks = new Map<symbol, string>();
  private nextOrder = 0;
  private submitting = 0;
  private lastSample: ResourceSample = { ramTotalMb: null, ramFreeMb: null, vramTotalMb: null, vramFreeMb: null };
  private lastSampleAt = new Date(0);
  private lastReservations = { ramMb: 0, vramMb: 0 };
  private lastRssSampleMs = 0;
  private sampling: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private tickAgain = false;
  private tickScheduled = false;
  private started: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  private hostLogs = new Map<string, WriteStream>();

  constructor(options: JobSchedulerOptions) {
    if (!options || typeof options.outputsDir !== 'string' || options.outputsDir === '') {
      throw new BadInputError(`JobScheduler: outputsDir must be a folder path, got ${JSON.stringify(options?.outputsDir)}`);
    }
    if (typeof options.backendUrl !== 'function') throw new BadInputError('JobScheduler: backendUrl must be a function returning the backend URL');
    const positive = (name: string, v: number | undefined, def: number, allowZero = true): number => {
      const x = v ?? def;
      if (typeof x !== 'number' || !Number.isFinite(x) || x < 0 || (!allowZero && x === 0)) {
        throw new BadInputError(`JobScheduler: ${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got ${JSON.stringify(v)}`);
      }
      return x;
    };
    this.outputsDir = options.outputsDir;
    this.opts = {
      queueCapacity: positive('queueCapacity', options.queueCapacity, 1000, false),
      tickIntervalMs: positive('tickIntervalMs', options.tickIntervalMs, 1000, false),
      starvationMs: positive('starvationMs', options.starvationMs, 60_000),
      cancelGraceMs: positive('cancelGraceMs', options.cancelGraceMs, 5000),
      sharedHostIdleMs: positive('sharedHostIdleMs', options.sharedHostIdleMs, 60_000),
      rssSampleIntervalMs: positive('rssSampleIntervalMs', options.rssSampleIntervalMs, 1000, false),
      evalProcessMain: options.evalProcessMain ?? EVAL_PROCESS_MAIN,
    };
    for (const k of ['ramMb', 'vramMb'] as const) {
      const v = options.staticCapacity?.[k];
      if (v !== undefined) positive(`staticCapacity.${k}`, v, 0);
    }
    this.backendUrl = options.backendUrl;
    this.staticCapacity = { ...options.staticCapacity };
    this.sampler = options.sampler ?? new ResourceSampler();
    this.workspaceDir = options.workspaceDir ?? (process.env.ACTIVE_WORKSPACE_DIR || undefined);
    this.builtinGraphsDir = options.builtinGraphsDir;
    this.builtinNodesetsDir = options.builtinNodesetsDir;
    this.log = options.logger ?? defaultLogger;
    this.hosts = new SharedHostManager({
      idleMs: this.opts.sharedHostIdleMs,
      logger: this.log,
      startHost: (nodeset) => this.startSharedHost(nodeset),
      onRestart: (nodeset, url) => void this.sharedHostMoved(nodeset, url),
      onLost: (nodeset) => this.emit({ type: 'queue' }),
    });
  }

  /** The run catalog (open after `start()`). */
  get catalog(): RunCatalog {
    if (!this.catalogRef) throw new Error('JobScheduler: call start() first');
    return this.catalogRef;
  }

  /** Opens the catalog, recovers the runs a previous backend left, and starts the tick loop. Idempotent. */
  start(): Promise<void> {
    this.started ??= (async () => {
      this.catalogRef = await RunCatalog.open(this.outputsDir, this.log);
      this.catalogRef.updateSettings({
        queueCapacity: this.opts.queueCapacity,
        tickIntervalMs: this.opts.tickIntervalMs,
        starvationMs: this.opts.starvationMs,
        cancelGraceMs: this.opts.cancelGraceMs,
        sharedHostIdleMs: this.opts.sharedHostIdleMs,
        staticCapacity: this.staticCapacity,
      });
      if (!existsSync(this.opts.evalProcessMain)) {
        this.log.error(`${this.opts.evalProcessMain} is missing (build first: npm run build:server); runs in eval processes will abort`);
      }
      await this.recover();
      try {
        this.lastSample = await this.sampler.sample();
        this.lastSampleAt = new Date();
      } catch {
        // the first tick tries again
      }
      if (this.closing) return;
      this.timer = setInterval(() => void this.tick(), this.opts.tickIntervalMs);
      this.timer.unref();
      this.requestTick();
    })();
    return this.started;
  }

  // ------------------------------------------------------------------ submit

  /** Validates, writes the run dir, takes references on the shared hosts, queues. Never spawns. */
  async submit(input: SubmitInput): Promise<RunSummary> {
    this.assertOpen();
    await this.start();
    checkSubmitInput(input);
    if (this.queued.length + this.submitting >= this.opts.queueCapacity) throw new QueueFullError(this.opts.queueCapacity);
    this.submitting++;
    try {
      const graph = await inspectRunGraph({
        graphName: input.graphName,
        overrides: input.overrides,
        workspaceDir: this.workspaceDir,
        builtinGraphsDir: this.builtinGraphsDir,
        builtinNodesetsDir: this.builtinNodesetsDir,
      });
      const workerCount = input.workerCount ?? 1;
      const estimate = estimateRun({
        workerCount,
        nodesets: graph.nodesets.map((e) => ({ name: e.name, parallelism: e.manifest.parallelism, ...(e.manifest.resources ? { resources: e.manifest.resources } : {}) })),
        calibratedPeakMb: this.catalog.calibratedPeak(input.graphName, workerCount),
        ...(input.marginalVramMb !== undefined ? { marginalVramMb: input.marginalVramMb } : {}),
      });
      const vramTotal = this.lastSample.vramTotalMb ?? this.staticCapacity.vramMb;
      if (input.marginalVramMb !== undefined && vramTotal !== undefined && input.marginalVramMb > vramTotal) {
        throw new BadInputError(`marginalVramMb ${input.marginalVramMb} is more than the ${Math.round(vramTotal)} MB of VRAM this machine has`);
      }
      this.assertOpen();
      const { runId, dir } = createRunDir(this.outputsDir);
      const spec: RunSpec = {
        runId,
        graphName: input.graphName,
        episodeCount: input.episodeCount,
        workerCount,
        seed: input.seed ?? 0,
        ...(input.stepBudget !== undefined ? { stepBudget: input.stepBudget } : {}),
        ...(input.perStepTimeoutSec !== undefined ? { perStepTimeoutSec: input.perStepTimeoutSec } : {}),
        priority: input.priority ?? 0,
        exclusiveGpu: input.exclusiveGpu ?? false,
        ...(input.marginalVramMb !== undefined ? { marginalVramMb: input.marginalVramMb } : {}),
        ...(input.memoryBudgetMb !== undefined ? { memoryBudgetMb: input.memoryBudgetMb } : {}),
        overrides: input.overrides ?? {},
        ...(input.dataset !== undefined ? { dataset: input.dataset } : {}),
        ...(input.split !== undefined ? { split: input.split } : {}),
        episodeOffset: input.episodeOffset ?? 0,
        ...(this.workspaceDir ? { activeWorkspaceDir: this.workspaceDir } : {}),
        viaSubprocess: input.viaSubprocess !== false && process.env.EVAL_SUBPROCESS !== '0',
        createdAt: new Date().toISOString(),
      };
      await writeSpec(dir, spec);
      // The summary goes down before the (slow) host start, so a crash here still leaves a recoverable queued run.
      const summary = queuedSummary(spec);
      await writeSummary(dir, summary);
      let urls: Record<string, string>;
      try {
        urls = await this.hosts.acquire(graph.shared, runId);
      } catch (err) {
        await rm(dir, { recursive: true, force: true });
        throw new EvalError('HOST_ERROR', `could not start the shared hosts of graph "${input.graphName}": ${errorMessage(err)}`, { cause: err });
      }
      await writeSharedUrls(dir, urls);
      const job = this.newJob(spec, dir, estimate, graph.shared);
      job.queuedSummary = summary;
      job.waitingReason = this.initialReason(job);
      this.enqueue(job);
      this.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess }));
      this.emit({ type: 'run', runId, summary });
      this.emit({ type: 'queue' });
      this.requestTick();
      return summary;
    } finally {
      this.submitting--;
    }
  }

  // ------------------------------------------------------------------ cancel

  /**
   * Queued: removed at once (CANCELLED + _DONE). Running: SIGTERM to its process group, SIGKILL
   * after cancelGraceMs; the reap finalises it. Idempotent while cancelling.
   */
  async cancel(runId: string): Promise<RunSummary> {
    assertRunId(runId);
    await this.start();
    const qi = this.queued.findIndex((j) => j.runId === runId);
    if (qi >= 0) {
      const job = this.queued[qi]!;
      this.queued.splice(qi, 1);
      job.cancelRequested = true;
      const summary = await this.rewriteSummary(
        job,
        (s) => {
          s.status = 'CANCELLED';
          s.finishedAt = new Date().toISOString();
          s.error = null;
        },
        job.queuedSummary ?? undefined,
      );
      await touchDone(job.runDir);
      this.hosts.release(runId);
      this.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess }));
      this.emit({ type: 'run', runId, summary });
      this.emit({ type: 'queue' });
      this.requestTick();
      return summary;
    }
    const job = this.running.get(runId);
    if (job) {
      if (!job.cancelRequested) {
        job.cancelRequested = true;
        this.log.info(`cancelling run ${runId}`);
        this.stopJob(job);
      }
      return this.currentSummary(job);
    }
    const ending = this.finishing.get(runId);
    if (ending) {
      const summary = await ending.finalized!;
      if (ending.cancelRequested) return summary;
      throw new ConflictError(`run ${runId} has already finished (${summary.status}); only a queued or running run can be cancelled`);
    }
    const dir = runDirPath(this.outputsDir, runId);
    if (!existsSync(dir)) throw new NotFoundError(`run "${runId}"`);
    let status: string = this.catalog.getRun(runId)?.status ?? 'unknown';
    try {
      status = (await readSummary(dir)).status;
    } catch {
      // keep the catalog's word
    }
    throw new ConflictError(`run ${runId} has already finished (${status}); only a queued or running run can be cancelled`);
  }

  // ------------------------------------------------------------------ reads

  queue(): QueueEntry[] {
    return this.queued.map((j, i) => ({
      runId: j.runId,
      position: i + 1,
      priority: j.spec.priority,
      graphName: j.spec.graphName,
      episodeCount: j.spec.episodeCount,
      workerCount: j.spec.workerCount,
      createdAt: j.spec.createdAt,
      exclusiveGpu: j.spec.exclusiveGpu,
      waitingReason: j.waitingReason,
      estimate: { ...j.estimate },
      reserving: j.reserving,
    }));
  }

  activeJobs(): ActiveJob[] {
    return [...this.running.values()].map((j) => ({
      runId: j.runId,
      priority: j.spec.priority,
      pid: j.pid,
      graphName: j.spec.graphName,
      startedAt: j.startedAt ?? j.spec.createdAt,
      episodesDone: j.episodesDone,
      episodeCount: j.spec.episodeCount,
      workerCount: j.spec.workerCount,
      viaSubprocess: j.viaSubprocess,
      exclusiveGpu: j.spec.exclusiveGpu,
      reservation: { ...j.estimate },
      rssMb: j.rssMb,
    }));
  }

  resources(): ResourceSnapshot {
    const s = this.lastSample;
    let reservedRam = 0;
    let reservedVram = 0;
    for (const j of this.running.values()) {
      reservedRam += j.estimate.ramMb;
      reservedVram += j.estimate.vramMb;
    }
    const ramMeasured = s.ramFreeMb !== null;
    const vramMeasured = s.vramFreeMb !== null;
    return {
      ramTotalMb: s.ramTotalMb ?? this.staticCapacity.ramMb ?? 0,
      ramFreeMb: s.ramFreeMb ?? Math.max(0, (this.staticCapacity.ramMb ?? 0) - reservedRam),
      vramTotalMb: s.vramTotalMb ?? this.staticCapacity.vramMb ?? null,
      vramFreeMb: s.vramFreeMb ?? (this.staticCapacity.vramMb !== undefined ? Math.max(0, this.staticCapacity.vramMb - reservedVram) : null),
      reservedRamMb: reservedRam,
      reservedVramMb: reservedVram,
      ramMeasured,
      vramMeasured,
      interactiveLockHolder: this.lockHolder(),
      sampledAt: this.lastSampleAt.toISOString(),
    };
  }

  /** The backend's shared nodeset hosts and who holds them. */
  sharedHosts(): SharedHostStatus[] {
    return this.hosts.list();
  }

  /** The run's folder; NOT_FOUND when there is none. */
  getRunDir(runId: string): string {
    const dir = runDirPath(this.outputsDir, runId);
    if (!existsSync(dir)) throw new NotFoundError(`run "${runId}"`);
    return dir;
  }

  /**
   * While held, admission starts nothing and every queued run says who holds the lock.
   * Returns the release function (idempotent).
   */
  acquireInteractiveLock(holder: string): () => void {
    if (typeof holder !== 'string' || holder === '') throw new BadInputError(`interactive lock holder must be a non-empty string, got ${JSON.stringify(holder)}`);
    const token = Symbol(holder);
    this.locks.set(token, holder);
    this.refreshReasons();
    return () => {
      if (this.locks.delete(token)) {
        this.refreshReasons();
        this.requestTick();
      }
    };
  }

  /** Queue changes and run status changes. Returns the unsubscribe function. */
  subscribe(listener: (e: SchedulerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Stops the tick loop, optionally cancels the running runs and waits for them, stops the shared
   * hosts and flushes the catalog. In-process runs are always cancelled (they live in this
   * process). Eval processes left running are detached; they end when this process does. Idempotent.
   */
  close(options: { cancelRunning?: boolean } = {}): Promise<void> {
    this.closing ??= (async () => {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      await this.started?.catch(() => {});
      while (this.ticking) await this.ticking.catch(() => {});
      await this.sampling;
      const jobs = [...this.running.values()];
      const waitFor: Promise<unknown>[] = [];
      for (const job of jobs) {
        if (options.cancelRunning || !job.viaSubprocess) {
          if (!job.cancelRequested) {
            job.cancelRequested = true;
            this.stopJob(job);
          }
          waitFor.push(this.exitOf(job));
        } else {
          job.child?.detach();
        }
      }
      await withTimeout(Promise.allSettled(waitFor), this.opts.cancelGraceMs + 3000);
      for (const job of jobs) {
        if (job.exit && this.running.has(job.runId)) this.reapJob(job);
      }
      await Promise.allSettled([...this.finishing.values()].map((j) => j.finalized));
      for (const job of this.running.values()) if (job.killTimer) clearTimeout(job.killTimer);
      await this.hosts.close().catch((err: unknown) => this.log.warn(`stopping shared hosts: ${errorMessage(err)}`));
      for (const s of this.hostLogs.values()) s.end();
      this.hostLogs.clear();
      await this.catalogRef?.close();
      this.listeners.clear();
    })();
    return this.closing;
  }

  // ------------------------------------------------------------------ tick

  /** Runs a tick now (coalesced with one in progress). */
  tick(): Promise<void> {
    if (this.closing || !this.catalogRef) return Promise.resolve();
    if (this.ticking) {
      this.tickAgain = true;
      return this.ticking;
    }
    this.ticking = (async () => {
      try {
        do {
          this.tickAgain = false;
          await this.runTick();
        } while (this.tickAgain && !this.closing);
      } catch (err) {
        this.log.error(`tick failed: ${errorMessage(err)}`);
      } finally {
        this.ticking = null;
      }
    })();
    return this.ticking;
  }

  private requestTick(): void {
    if (this.tickScheduled || this.closing) return;
    this.tickScheduled = true;
    setImmediate(() => {
      this.tickScheduled = false;
      void this.tick();
    });
  }

  private async runTick(): Promise<void> {
    let changed = this.reap();
    changed = (await this.admit()) || changed;
    this.hosts.drainIdle();
    if (changed) this.emit({ type: 'queue' });
    // The /proc walk takes milliseconds: it runs beside the ticks so a child's exit is never kept waiting behind it.
    if (!this.sampling && Date.now() - this.lastRssSampleMs >= this.opts.rssSampleIntervalMs) {
      this.lastRssSampleMs = Date.now();
      this.sampling = this.sampleRunning()
        .catch((err: unknown) => this.log.warn(`sampling running runs: ${errorMessage(err)}`))
        .finally(() => {
          this.sampling = null;
        });
    }
  }

  /** Moves every exited job out of the running set and starts its finalisation. */
  private reap(): boolean {
    let changed = false;
    for (const job of [...this.running.values()]) {
      if (job.adopted && !job.exit && !isPidAlive(job.pid!)) job.exit = { kind: 'process', exit: { exitCode: null, signal: null } };
      if (job.exit) {
        this.reapJob(job);
        changed = true;
      }
    }
    return changed;
  }

  private reapJob(job: Job): void {
    this.running.delete(job.runId);
    job.state = 'finishing';
    this.finishing.set(job.runId, job);
    if (job.killTimer) clearTimeout(job.killTimer);
    job.killTimer = null;
    // Finalising waits a turn so the admission this exit makes room for gets the disk first.
    job.finalized = new Promise<void>((r) => setImmediate(r))
      .then(() => this.finalize(job))
      .finally(() => {
        this.finishing.delete(job.runId);
      });
    job.finalized.catch((err: unknown) => this.log.error(`finalising run ${job.runId}: ${errorMessage(err)}`));
  }

  private async finalize(job: Job): Promise<RunSummary> {
    const exit = job.exit!;
    if (job.viaSubprocess && job.pid !== null && groupAlive(job.pid)) {
      // Anything the eval process left in its group (a host that missed its parent's exit) goes too.
      signalGroup(job.pid, 'SIGKILL');
    }
    let summary: RunSummary;
    if (exit.kind === 'inProcess') summary = exit.summary;
    else {
      try {
        summary = await readSummary(job.runDir);
      } catch {
        summary = { ...queuedSummary(job.spec), status: 'RUNNING', startedAt: job.startedAt };
      }
    }
    const done = isDone(job.runDir);
    let change: ((s: RunSummary) => void) | null = null;
    const now = new Date().toISOString();
    if (job.overBudget) {
      const { rssMb, budgetMb } = job.overBudget;
      change = (s) => {
        s.status = 'FAILED';
        s.error = { code: 'OUT_OF_BUDGET', message: `the run's processes used ${Math.round(rssMb)} MB, over its memory budget of ${budgetMb} MB; stopped` };
      };
    } else if (exit.kind === 'error') {
      change = (s) => {
        s.status = 'FAILED';
        s.error = { code: exit.error instanceof EvalError ? exit.error.code : 'INTERNAL_SERVER_ERROR', message: errorMessage(exit.error) };
      };
    } else if (exit.kind === 'process' && (!done || !isTerminalRunStatus(summary.status))) {
      const last = await lastLine(join(job.runDir, FILES.stderr));
      const why = describeExit(exit.exit, job.adopted) + (last ? ` (last stderr line: ${last})` : '');
      change = job.cancelRequested
        ? (s) => {
            s.status = 'CANCELLED';
            s.error = { code: 'ABORTED', message: `cancelled; the eval process ${why} before writing its final summary` };
          }
        : (s) => {
            s.status = 'ABORTED';
            s.error = { code: 'ABORTED', message: `the eval process ${why} before finishing` };
          };
    }
    if (change) {
      const apply = change;
      summary = await this.rewriteSummary(job, (s) => {
        apply(s);
        s.finishedAt ??= now;
        delete s.pid;
      }, summary);
    }
    if (!isDone(job.runDir)) await touchDone(job.runDir);
    if (job.viaSubprocess && job.pid !== null) {
      const rec = await readProcessRecord(job.runDir);
      if (rec) {
        await writeJsonAtomic(join(job.runDir, FILES.process), {
          ...rec,
          ...(job.peakRssMb > 0 ? { peakRssMb: Math.round(job.peakRssMb) } : {}),
          exitCode: exit.kind === 'process' ? exit.exit.exitCode : null,
          signal: exit.kind === 'process' ? exit.exit.signal : null,
          ...(exit.kind === 'process' && exit.exit.exitedAt ? { exitedAt: exit.exit.exitedAt } : {}),
        }).catch(() => {});
      }
      if (summary.status === 'COMPLETED' && job.peakRssMb > 0) {
        this.catalog.recordCalibration(job.spec.graphName, job.spec.workerCount, Math.round(job.peakRssMb));
      }
    }
    this.hosts.release(job.runId);
    this.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess, pid: job.pid }));
    this.log.info(`run ${job.runId} ${summary.status.toLowerCase()} (${summary.episodesDone}/${summary.episodeCount} episodes)`);
    this.emit({ type: 'run', runId: job.runId, summary });
    this.emit({ type: 'queue' });
    return summary;
  }

  /** Starts every queued job that fits; updates the others' waiting reasons. */
  private async admit(): Promise<boolean> {
    let sample: ResourceSample;
    try {
      sample = await this.sampler.sample();
    } catch (err) {
      this.log.warn(`resource sample failed: ${errorMessage(err)}`);
      sample = { ramTotalMb: null, ramFreeMb: null, vramTotalMb: null, vramFreeMb: null };
    }
    this.lastSample = sample;
    this.lastSampleAt = new Date();
    if (this.closing) return false;
    const now = Date.now();
    const plan = planAdmission({
      queue: this.queued.map(toCandidate),
      running: [...this.running.values()].map((j) => ({ runId: j.runId, reservation: j.estimate, exclusiveGpu: j.spec.exclusiveGpu, rssMb: j.rssMb })),
      capacity: {
        ramFreeMb: sample.ramFreeMb,
        vramFreeMb: sample.vramFreeMb,
        ramTotalMb: sample.ramTotalMb,
        vramTotalMb: sample.vramTotalMb,
        staticRamMb: this.staticCapacity.ramMb,
        staticVramMb: this.staticCapacity.vramMb,
      },
      lockHolder: this.lockHolder(),
      now,
      starvationMs: this.opts.starvationMs,
    });
    this.lastReservations = { ramMb: plan.reservedRamMb, vramMb: plan.reservedVramMb };
    let changed = false;
    for (const job of this.queued) {
      const v = plan.waiting.get(job.runId);
      if (!v) continue;
      if (v.waitingReason !== job.waitingReason || v.reserving !== job.reserving) changed = true;
      job.waitingReason = v.waitingReason;
      job.reserving = v.reserving;
      if (job.skippedSinceMs === null && this.locks.size === 0) job.skippedSinceMs = now;
    }
    if (plan.admit.length === 0) return changed;
    const admitted = new Set(plan.admit);
    const jobs = this.queued.filter((j) => admitted.has(j.runId));
    for (let i = this.queued.length - 1; i >= 0; i--) if (admitted.has(this.queued[i]!.runId)) this.queued.splice(i, 1);
    for (const job of jobs) {
      job.state = 'starting';
      job.startedAt = new Date().toISOString();
      this.running.set(job.runId, job);
    }
    await Promise.all(jobs.map((job) => this.launch(job)));
    return true;
  }

  private async launch(job: Job): Promise<void> {
    try {
      const summary = await this.rewriteSummary(
        job,
        (s) => {
          s.status = 'RUNNING';
          s.startedAt = job.startedAt;
        },
        job.queuedSummary ?? undefined,
      );
      job.queuedSummary = null;
      this.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess }));
      this.emit({ type: 'run', runId: job.runId, summary });
      if (job.viaSubprocess) {
        const child = await spawnEvalProcess({
          evalProcessMain: this.opts.evalProcessMain,
          runDir: job.runDir,
          backendUrl: this.backendUrl(),
          ...(job.spec.activeWorkspaceDir ? { workspaceDir: job.spec.activeWorkspaceDir } : {}),
        });
        job.child = child;
        job.pid = child.pid;
        job.state = 'running';
        this.catalog.upsertRun({ id: job.runId, pid: child.pid });
        this.log.info(`run ${job.runId} started (pid ${child.pid}, ${job.spec.workerCount} worker(s), reserving ${job.estimate.ramMb} MB RAM)`);
        void child.exited.then((exit) => {
          job.exit = { kind: 'process', exit };
          this.requestTick();
        });
      } else {
        const { runBatch } = await import('../eval-process/run-batch.js');
        const abort = new AbortController();
        job.abort = abort;
        job.state = 'running';
        this.log.info(`run ${job.runId} started in the backend process`);
        runBatch({
          runDir: job.runDir,
          signal: abort.signal,
          sharedUrls: this.hosts.urls(job.sharedNodesets),
          bindSharedHostMover: (move) => {
            job.moveSharedHost = move;
          },
          onSummary: (s) => {
            job.episodesDone = s.episodesDone;
          },
        }).then(
          (summary) => {
            job.exit = { kind: 'inProcess', summary };
            this.requestTick();
          },
          (error: unknown) => {
            job.exit = { kind: 'error', error };
            this.requestTick();
          },
        );
      }
      if (job.cancelRequested) this.stopJob(job);
    } catch (error) {
      this.log.error(`run ${job.runId} could not start: ${errorMessage(error)}`);
      job.exit = { kind: 'error', error };
      this.requestTick();
    }
  }

  /** SIGTERM to the process group and our own SIGKILL timer; an in-process run is aborted. */
  private stopJob(job: Job): void {
    if (job.abort) {
      job.abort.abort(new Error('cancelled'));
      return;
    }
    if (job.pid === null) return; // still starting: launch() stops it once spawned
    signalGroup(job.pid, 'SIGTERM');
    if (job.killTimer) return;
    const pid = job.pid;
    job.killTimer = setTimeout(() => {
      job.killTimer = null;
      if (!job.exit || groupAlive(pid)) {
        if (signalGroup(pid, 'SIGKILL')) this.log.warn(`run ${job.runId}: still running ${this.opts.cancelGraceMs} ms after SIGTERM; sent SIGKILL`);
      }
    }, this.opts.cancelGraceMs);
  }

  /** RSS of every running eval process tree (calibration, memory budgets) and each run's progress. */
  private async sampleRunning(): Promise<void> {
    const jobs = [...this.running.values()].filter((j) => j.viaSubprocess && j.pid !== null && !j.exit);
    if (jobs.length === 0) return;
    let rss: Map<number, number>;
    try {
      const pids = jobs.map((j) => j.pid!);
      rss = this.sampler.processTreesRssMb ? await this.sampler.processTreesRssMb(pids) : await processTreesRssMbVia(this.sampler, pids);
    } catch (err) {
      this.log.warn(`process RSS sample failed: ${errorMessage(err)}`);
      return;
    }
    for (const job of jobs) {
      await this.readProgress(job);
      const mb = rss.get(job.pid!);
      if (mb === undefined || mb <= 0) continue;
      job.rssMb = Math.round(mb);
      job.peakRssMb = Math.max(job.peakRssMb, mb);
      const budget = job.spec.memoryBudgetMb;
      if (budget !== undefined && mb > budget && !job.overBudget && !job.exit) {
        job.overBudget = { rssMb: mb, budgetMb: budget };
        this.log.warn(`run ${job.runId}: its processes use ${Math.round(mb)} MB, over its memory budget of ${budget} MB; stopping it`);
        this.stopJob(job);
      }
    }
  }

  private async readProgress(job: Job): Promise<void> {
    try {
      const st = await stat(join(job.runDir, FILES.summary));
      if (st.mtimeMs === job.summaryMtimeMs) return;
      job.summaryMtimeMs = st.mtimeMs;
      const s = await readSummary(job.runDir);
      if (s.episodesDone !== job.episodesDone) {
        job.episodesDone = s.episodesDone;
        this.catalog.upsertRun({
          id: job.runId,
          episodesDone: s.episodesDone,
          statusCounts: s.statusCounts,
          aggregateMetrics: s.aggregateMetrics,
        });
      }
    } catch {
      // mid-rename or gone: next sample
    }
  }

  // ------------------------------------------------------------------ recovery

  private async recover(): Promise<void> {
    const scan = await scanUnfinishedRuns(this.outputsDir);
    for (const run of scan.finishedWithoutDone) {
      await touchDone(run.runDir);
      this.catalog.upsertRun(catalogRunFromSummary(run.summary!, { viaSubprocess: run.spec!.viaSubprocess !== false }));
    }
    for (const run of scan.unreadable) {
      this.log.warn(`run ${run.runId}: no readable spec.json/summary.json; left as it is`);
    }
    for (const run of scan.running) await this.recoverRunning(run);
    for (const run of scan.queued) await this.recoverQueued(run);
    if (scan.queued.length + scan.running.length > 0) {
      this.log.info(`recovered ${scan.queued.length} queued run(s) and ${scan.running.length} run(s) recorded as running`);
    }
  }

  private async recoverQueued(run: UnfinishedRun): Promise<void> {
    const spec = run.spec!;
    let estimate: ResourceEstimate;
    let shared: string[];
    try {
      const graph = await inspectRunGraph({
        graphName: spec.graphName,
        overrides: spec.overrides,
        workspaceDir: spec.activeWorkspaceDir ?? this.workspaceDir,
        builtinGraphsDir: this.builtinGraphsDir,
        builtinNodesetsDir: this.builtinNodesetsDir,
      });
      shared = graph.shared;
      estimate = estimateRun({
        workerCount: spec.workerCount,
        nodesets: graph.nodesets.map((e) => ({ name: e.name, parallelism: e.manifest.parallelism, ...(e.manifest.resources ? { resources: e.manifest.resources } : {}) })),
        calibratedPeakMb: this.catalog.calibratedPeak(spec.graphName, spec.workerCount),
        ...(spec.marginalVramMb !== undefined ? { marginalVramMb: spec.marginalVramMb } : {}),
      });
      // The hosts of the previous backend are gone: new ones, new URLs.
      await writeSharedUrls(run.runDir, await this.hosts.acquire(shared, run.runId));
    } catch (err) {
      await this.finishUnstartable(run, 'FAILED', { code: 'GRAPH_INVALID', message: `could not be re-queued after a restart: ${errorMessage(err)}` });
      return;
    }
    let summary = run.summary!;
    if (summary.status !== 'QUEUED') {
      summary = { ...summary, seq: summary.seq + 1, status: 'QUEUED', startedAt: null };
      await writeSummary(run.runDir, summary);
      this.log.info(`run ${run.runId}: its eval process was never started; queued again`);
    }
    const job = this.newJob(spec, run.runDir, estimate, shared);
    job.queuedSummary = summary;
    job.waitingReason = this.initialReason(job);
    this.enqueue(job);
    this.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess }));
  }

  private async recoverRunning(run: UnfinishedRun): Promise<void> {
    const spec = run.spec!;
    const pid = run.process?.pid ?? run.summary?.pid ?? null;
    if (spec.viaSubprocess !== false && pid !== null && (await isEvalProcessOf(pid, run.runDir, this.opts.evalProcessMain))) {
      const graph = await inspectRunGraph({
        graphName: spec.graphName,
        overrides: spec.overrides,
        workspaceDir: spec.activeWorkspaceDir ?? this.workspaceDir,
        builtinGraphsDir: this.builtinGraphsDir,
        builtinNodesetsDir: this.builtinNodesetsDir,
      }).catch(() => null);
      const estimate = estimateRun({
        workerCount: spec.workerCount,
        nodesets: (graph?.nodesets ?? []).map((e) => ({ name: e.name, parallelism: e.manifest.parallelism, ...(e.manifest.resources ? { resources: e.manifest.resources } : {}) })),
        calibratedPeakMb: this.catalog.calibratedPeak(spec.graphName, spec.workerCount),
      });
      const job = this.newJob(spec, run.runDir, estimate, []);
      job.state = 'running';
      job.adopted = true;
      job.pid = pid;
      job.startedAt = run.summary?.startedAt ?? run.process?.startedAt ?? null;
      job.episodesDone = run.summary?.episodesDone ?? 0;
      this.running.set(job.runId, job);
      this.catalog.upsertRun(catalogRunFromSummary(run.summary!, { viaSubprocess: true, pid }));
      this.log.info(`run ${run.runId}: its eval process (pid ${pid}) is still running; adopted and watched until it exits`);
      return;
    }
    const why =
      spec.viaSubprocess === false
        ? 'it ran inside the backend, which stopped'
        : pid === null
          ? 'the backend stopped before its eval process started'
          : `the backend restarted and its eval process (pid ${pid}) is gone`;
    await this.finishUnstartable(run, 'ABORTED', { code: 'ABORTED', message: why });
  }

  /** Writes a terminal summary (keeping finished episodes) and _DONE for a run that cannot go on. */
  private async finishUnstartable(run: UnfinishedRun, status: 'ABORTED' | 'FAILED', error: { code: string; message: string }): Promise<void> {
    const base = run.summary ?? queuedSummary(run.spec!);
    const summary: RunSummary = { ...base, seq: base.seq + 1, status, error, finishedAt: new Date().toISOString() };
    delete summary.pid;
    await writeSummary(run.runDir, summary);
    await touchDone(run.runDir);
    this.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: run.spec?.viaSubprocess !== false }));
    this.log.warn(`run ${run.runId} marked ${status.toLowerCase()}: ${error.message}`);
  }

  // ------------------------------------------------------------------ helpers

  private newJob(spec: RunSpec, runDir: string, estimate: ResourceEstimate, shared: string[]): Job {
    return {
      runId: spec.runId,
      runDir,
      spec,
      estimate,
      sharedNodesets: shared,
      order: this.nextOrder++,
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
      overBudget: null,
      episodesDone: 0,
      summaryMtimeMs: 0,
      queuedSummary: null,
      moveSharedHost: null,
      finalized: null,
    };
  }

  /** Inserts in admission order (binary search: priority desc, then submission order). */
  private enqueue(job: Job): void {
    let lo = 0;
    let hi = this.queued.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.queued[mid]!, job)) lo = mid + 1;
      else hi = mid;
    }
    this.queued.splice(lo, 0, job);
  }

  private initialReason(job: Job): string {
    const holder = this.lockHolder();
    if (holder !== null) return `interactive session '${holder}' holds the lock`;
    const ahead = this.queued.filter((j) => before(j, job)).length;
    if (ahead === 0) return 'waiting for the next admission check';
    const higher = this.queued.filter((j) => j.spec.priority > job.spec.priority).length;
    return higher > 0
      ? `behind ${higher} higher-priority job${higher === 1 ? '' : 's'}`
      : `behind ${ahead} earlier job${ahead === 1 ? '' : 's'}`;
  }

  private refreshReasons(): void {
    const holder = this.lockHolder();
    if (holder !== null) for (const j of this.queued) j.waitingReason = `interactive session '${holder}' holds the lock`;
    this.emit({ type: 'queue' });
  }

  private lockHolder(): string | null {
    for (const h of this.locks.values()) return h;
    return null;
  }

  private async currentSummary(job: Job): Promise<RunSummary> {
    try {
      return await readSummary(job.runDir);
    } catch {
      return { ...queuedSummary(job.spec), status: job.state === 'queued' ? 'QUEUED' : 'RUNNING', startedAt: job.startedAt };
    }
  }

  /** Re-reads summary.json, applies `change`, writes it back with the next seq. */
  private async rewriteSummary(job: Job, change: (s: RunSummary) => void, current?: RunSummary): Promise<RunSummary> {
    const s = current ? structuredClone(current) : await this.currentSummary(job);
    change(s);
    s.seq += 1;
    await writeSummary(job.runDir, s);
    return s;
  }

  private exitOf(job: Job): Promise<unknown> {
    if (job.exit) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (job.exit || (job.adopted && job.pid !== null && !isPidAlive(job.pid))) {
          clearInterval(poll);
          resolve();
        }
      }, 20);
    });
  }

  private async startSharedHost(nodeset: string) {
    const { NodesetRegistry } = await import('../runtime/registry.js');
    const registry = await NodesetRegistry.scan({
      ...(this.builtinNodesetsDir ? { builtinDir: this.builtinNodesetsDir } : {}),
      ...(this.workspaceDir ? { workspaceDir: this.workspaceDir } : {}),
    });
    const entry = registry.get(nodeset);
    const logDir = join(this.outputsDir, 'shared-hosts');
    mkdirSync(logDir, { recursive: true });
    let logStream = this.hostLogs.get(nodeset);
    if (!logStream) {
      logStream = createWriteStream(join(logDir, `${nodeset}.stderr.log`), { flags: 'a' });
      this.hostLogs.set(nodeset, logStream);
    }
    const stream = logStream;
    return spawnHost({ entry, onStderr: (line) => stream.write(line + '\n') });
  }

  /** A shared host came back on a new URL: queued runs get it in shared_urls.json, running ones by message. */
  private async sharedHostMoved(nodeset: string, url: string): Promise<void> {
    const message: BackendToEvalMessage = { type: 'sharedHostMoved', nodeset, url };
    for (const job of [...this.queued, ...this.running.values()]) {
      if (!job.sharedNodesets.includes(nodeset)) continue;
      await writeSharedUrls(job.runDir, this.hosts.urls(job.sharedNodesets)).catch(() => {});
      job.child?.send(message);
      job.moveSharedHost?.(nodeset, url);
    }
    this.emit({ type: 'queue' });
  }

  private emit(e: SchedulerEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        this.log.warn(`scheduler event listener threw: ${errorMessage(err)}`);
      }
    }
  }

  private assertOpen(): void {
    if (this.closing) throw new ConflictError('the scheduler is closed');
  }
}

function toCandidate(j: Job): AdmissionCandidate {
  return { runId: j.runId, priority: j.spec.priority, estimate: j.estimate, exclusiveGpu: j.spec.exclusiveGpu, skippedSinceMs: j.skippedSinceMs };
}

/** The summary a queued run starts with; seq 1 so the eval process's first write (seq ≥ 1 + 1) is newer. */
function queuedSummary(spec: RunSpec): RunSummary {
  return { ...initialSummary(spec, 'QUEUED'), seq: 1 };
}

function describeExit(e: EvalExit, adopted: boolean): string {
  if (e.signal) return `was killed by ${e.signal}`;
  if (e.exitCode !== null) return `exited with code ${e.exitCode}`;
  return adopted ? 'exited while the backend was restarting' : 'exited';
}

/** The last non-empty line of a log, from its final 4 KB. */
async function lastLine(path: string): Promise<string | null> {
  let fh;
  try {
    fh = await open(path, 'r');
    const { size } = await fh.stat();
    const len = Math.min(size, 4096);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    const lines = buf.toString('utf8').split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
    const line = lines[lines.length - 1];
    return line ? line.slice(0, 300) : null;
  } catch {
    return null;
  } finally {
    await fh?.close();
  }
}

async function processTreesRssMbVia(sampler: ResourceSource, pids: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const pid of pids) out.set(pid, await sampler.processTreeRssMb(pid));
  return out;
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}
