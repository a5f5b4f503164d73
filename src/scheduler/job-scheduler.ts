/**
 * JobScheduler: the backend's queue of runs. `submit` only queues; a tick (reap → admit →
 * drain pending unloads, every second and right after a submit, a cancel or a child's exit)
 * starts what fits, each run in its own eval process (or in this process when the run asks).
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { BadInputError, ConflictError, CodedError, NotFoundError, QueueFullError, errorMessage } from '../errors.js';
import { isTerminalRunStatus } from '../statuses.js';
import { catalogRunFromSummary, RunCatalog } from '../store/catalog.js';
import { RunsRootWatcher } from '../store/runs-root-watcher.js';
import { assertRunId, createRunDir, isDone, readSummary, runDirPath, writeSharedUrls, writeSpec, writeSummary } from '../store/run-dir.js';
import { describeStorage, StorageError, storageCodeOf, type StorageCode } from '../store/storage-fault.js';
import type { BackendToEvalMessage } from '../eval-process/messages.js';
import type { RunSpec, RunSummary } from '../store/types.js';
import { parseRunInput } from '../spec/parse-run-spec.js';
import { runSpecOf, type RunInputFields } from '../spec/run-spec.js';
import { labelsOf } from '../spec/run-labels.js';
import { lockedReason, planAdmission } from './admission/admission.js';
import { cancelQueuedJob, stopJob, waitForExits } from './job/cancel-job.js';
import { estimateRun, nodesetCosts } from './admission/estimate.js';
import { effectiveWorkerCount } from '../spec/effective-workers.js';
import { finalizeJob, retryUnrecorded } from './job/finalize-job.js';
import { InteractiveLock } from './admission/interactive-lock.js';
import { createJob, type Job, type JobContext, type UnrecordedRun } from './job/job.js';
import { JobQueue } from './admission/job-queue.js';
import { currentSummary, queuedSummary } from './job/job-summary.js';
import { activeJob, admissionCandidate, queueEntry, runningReservation } from './job/job-views.js';
import { launchJob } from './job/launch-job.js';
import { isHung } from './job/subprocess-job.js';
import { acquireSharedHosts, REMOTE_ESTIMATE } from './job/remote-job.js';
import { recoverRuns } from './recovery/recover-runs.js';
import { isPidAlive, type ResourceSample } from './admission/resource-sampler.js';
import { resourceSnapshot } from './admission/resource-snapshot.js';
import { RssMonitor } from './admission/rss-monitor.js';
import { assertModelSetup, inspectRunGraph } from './run-graph.js';
import type { RunPolicy } from '../spec/run-policy.js';
import { recordRunManifest } from './record-run-manifest.js';
import { assertDatasetSelection } from './dataset-selection.js';
import { resolveSchedulerOptions, type JobSchedulerOptions, type SchedulerSettings } from './scheduler-options.js';
import { SharedHostManager } from './shared-hosts/shared-host-manager.js';
import { SharedHostStarter } from './shared-hosts/shared-host-starter.js';
import { TickLoop } from './tick-loop.js';
import { queueRetry } from './retry-run.js';
import { interruptedByBackend } from './recovery/interrupted.js';
import { declinedRuns, declineResume } from './recovery/resume-declined.js';
import { retryEndingsOf } from '../store/attempts.js';
import { hostSecretFor } from '../host/host-secret.js';
import { HostClient } from '../host/host-client.js';
import type {
  ActiveJob,
  FrozenSubmit,
  QueueEntry,
  ResourceEstimate,
  RetryResult,
  ResourceSnapshot,
  SchedulerEvent,
  SchedulerLogger,
  SharedHostStatus,
} from './types.js';

import type { EndpointUse } from '../core/types.js';
import { RunReader } from '../store/run-reader.js';
import { frozenBaselineFor, writeFrozenBaseline } from '../compare/frozen-baseline.js';

export type { JobSchedulerOptions } from './scheduler-options.js';

/** The longest wait for a shared host's /stats when the API asks for the endpoints: a busy host must not hold a page. */
const ENDPOINT_STATS_TIMEOUT_MS = 2000;

const UNMEASURED: ResourceSample = { ramTotalMb: null, ramFreeMb: null, vramTotalMb: null, vramFreeMb: null };

export class JobScheduler {
  readonly outputsDir: string;
  private readonly settings: SchedulerSettings;
  private readonly log: SchedulerLogger;
  private readonly hosts: SharedHostManager;
  private readonly hostStarter: SharedHostStarter;
  private readonly ctx: JobContext;
  private readonly ticks: TickLoop;
  private readonly rss: RssMonitor;
  private readonly lock = new InteractiveLock();
  private catalogRef: RunCatalog | null = null;
  /** Run dirs appearing or leaving (a local `evalctl run` into these outputs) trigger a rescan at once. */
  private runsRootWatcher: RunsRootWatcher | null = null;

  /** Queued jobs in admission order. */
  private readonly queued = new JobQueue();
  private readonly running = new Map<string, Job>();
  private readonly finishing = new Map<string, Job>();
  private readonly unrecorded = new Map<string, UnrecordedRun>();
  /** Runs whose retry is being prepared, so two calls cannot both move its records. */
  private readonly retrying = new Set<string>();
  private readonly listeners = new Set<(e: SchedulerEvent) => void>();
  /** Work started in the background (resuming or noting interrupted runs) that close() waits for, so nothing writes after it. */
  private readonly background = new Set<Promise<unknown>>();
  private nextOrder = 0;
  private submitting = 0;
  private lastSample: ResourceSample = UNMEASURED;
  private lastSampleAt = new Date(0);
  private started: Promise<void> | null = null;
  /** When the last tick began (performance.now()): a tick late by much of the hung limit cannot judge silence. */
  private lastTickAtMs: number | null = null;
  private closing: Promise<void> | null = null;

  constructor(options: JobSchedulerOptions) {
    this.settings = resolveSchedulerOptions(options);
    this.outputsDir = this.settings.outputsDir;
    this.log = this.settings.log;
    this.hostStarter = new SharedHostStarter(this.outputsDir, this.settings.graphDirs);
    this.hosts = new SharedHostManager({
      idleMs: this.settings.sharedHostIdleMs,
      logger: this.log,
      startHost: (nodeset) => this.hostStarter.start(nodeset),
      health: (url, signal) => new HostClient(url).health(signal),
      hungAfterMs: this.settings.sharedHostHungMs,
      onRestart: (nodeset, url) => void this.sharedHostMoved(nodeset, url),
      onLost: () => this.emit({ type: 'queue' }),
    });
    this.ticks = new TickLoop({
      intervalMs: this.settings.tickIntervalMs,
      run: () => this.runTick(),
      ready: () => this.catalogRef !== null,
      onError: (m) => this.log.error(m),
    });
    const catalog = (): RunCatalog => this.catalog;
    this.ctx = {
      get catalog() {
        return catalog();
      },
      hosts: this.hosts,
      log: this.log,
      evalProcessMain: this.settings.evalProcessMain,
      backendUrl: this.settings.backendUrl,
      cancelGraceMs: this.settings.cancelGraceMs,
      evalHungMs: this.settings.evalHungMs,
      emit: (e) => this.emit(e),
      requestTick: () => this.ticks.request(),
      unrecorded: this.unrecorded,
      remote: this.settings.remote,
    };
    this.rss = new RssMonitor({ source: this.settings.sampler, intervalMs: this.settings.rssSampleIntervalMs, ctx: this.ctx });
  }

  /** The run catalog (open after `start()`). */
  get catalog(): RunCatalog {
    if (!this.catalogRef) throw new Error('JobScheduler: call start() first');
    return this.catalogRef;
  }

  /** Opens the catalog, recovers the runs a previous backend left, and starts the tick loop. Idempotent. */
  start(): Promise<void> {
    this.started ??= (async () => {
      const s = this.settings;
      this.catalogRef = await RunCatalog.open(this.outputsDir, this.log);
      this.catalogRef.updateSettings({
        queueCapacity: s.queueCapacity,
        tickIntervalMs: s.tickIntervalMs,
        starvationMs: s.starvationMs,
        cancelGraceMs: s.cancelGraceMs,
        sharedHostIdleMs: s.sharedHostIdleMs,
        staticCapacity: s.staticCapacity,
      });
      if (!existsSync(s.evalProcessMain)) {
        this.log.error(`${s.evalProcessMain} is missing (build first: npm run build:server); runs in eval processes will abort`);
      }
      await recoverRuns({
        outputsDir: this.outputsDir,
        graphDirs: s.graphDirs,
        ctx: this.ctx,
        policy: s.policy,
        newJob: (spec, runDir, estimate, shared) => this.newJob(spec, runDir, estimate, shared),
        enqueue: (job, summary) => this.enqueue(job, summary),
        adopt: (job) => this.running.set(job.runId, job),
      });
      try {
        this.lastSample = await s.sampler.sample();
        this.lastSampleAt = new Date();
      } catch {
        // the first tick tries again
      }
      if (this.closing) return;
      this.runsRootWatcher = new RunsRootWatcher({
        outputsDir: this.outputsDir,
        onChange: () => this.ticks.request(),
        onError: (err) => this.log.warn(`watching ${this.outputsDir} for run directories: ${errorMessage(err)}; rescanning every tick`),
      });
      this.runsRootWatcher.start();
      this.ticks.start();
      this.ticks.request();
      // In the background: starting shared hosts for each resumed run must not hold the server's start up.
      if (s.resumeInterrupted)
        this.inBackground(this.resumeInterrupted().catch((err: unknown) => this.log.warn(`resuming runs: ${errorMessage(err)}`)));
      else
        this.inBackground(
          this.declineInterrupted().catch((err: unknown) => this.log.warn(`noting the runs left unresumed: ${errorMessage(err)}`)),
        );
    })();
    return this.started;
  }

  /** What a submitted run may ask (operator-only keys, known endpoints, code-running tools); Live Play keeps the same rules. */
  get policy(): RunPolicy {
    return this.settings.policy;
  }

  /** Checks a run as `submit` would (the input, the graph with its overrides, the operator's rules) and queues nothing. */
  async vet(fields: RunInputFields): Promise<void> {
    const input = parseRunInput(fields);
    const graph = await inspectRunGraph({
      graphName: input.graphName,
      overrides: input.overrides,
      ...this.settings.graphDirs,
      policy: this.settings.policy,
    });
    graph.registry.close();
  }

  /**
   * Checks the input with the run-spec schema, freezes the graph (overrides applied, validated)
   * into the spec, writes the run dir, takes references on the shared hosts, queues. Never spawns.
   */
  async submit(fields: RunInputFields, frozen?: FrozenSubmit): Promise<RunSummary> {
    this.assertOpen();
    await this.start();
    const input = parseRunInput(fields);
    const { queueCapacity, graphDirs, staticCapacity } = this.settings;
    if (input.stopWhen && this.settings.remote)
      throw new BadInputError(
        'stopWhen: a run that stops early plays in one eval process; this server spreads runs over workers (--redis), which do not stop early',
      );
    if (this.queued.length + this.submitting >= queueCapacity) throw new QueueFullError(queueCapacity);
    // Scale-out: refused before anything is written when the run could not reach the workers.
    await this.settings.remote?.assertReachable();
    this.submitting++;
    try {
      const graph = await inspectRunGraph({
        graphName: input.graphName,
        overrides: input.overrides,
        ...(frozen ? { frozen: frozen.graph } : {}),
        ...graphDirs,
        policy: this.settings.policy,
      });
      await assertDatasetSelection(graph.nodesets, input, graphDirs.workspaceDir);
      if (!frozen) assertModelSetup(input.graphName, graph);
      await frozen?.check?.(graph.nodesets, graphDirs.workspaceDir);
      const workerCount = effectiveWorkerCount(input);
      const estimate = estimateRun({
        workerCount,
        nodesets: nodesetCosts(graph.nodesets),
        calibratedPeakMb: this.catalog.calibratedPeak(input.graphName, workerCount),
        calibratedVramPeakMb: this.catalog.calibratedVramPeak(input.graphName, workerCount),
        calibratedCores: this.catalog.calibratedCores(input.graphName, workerCount),
        ...(input.marginalVramMb !== undefined ? { marginalVramMb: input.marginalVramMb } : {}),
      });
      const vramTotal = this.lastSample.vramTotalMb ?? staticCapacity.vramMb;
      if (input.marginalVramMb !== undefined && vramTotal !== undefined && input.marginalVramMb > vramTotal) {
        throw new BadInputError(
          `marginalVramMb ${input.marginalVramMb} is more than the ${Math.round(vramTotal)} MB of VRAM this machine has`,
        );
      }
      this.assertOpen();
      let made: { runId: string; dir: string } | null = null;
      let spec: RunSpec;
      let summary: RunSummary;
      try {
        made = createRunDir(this.outputsDir);
        // EVAL_SUBPROCESS=0 in the backend's environment runs every run in-process.
        const viaSubprocess = input.viaSubprocess && process.env.EVAL_SUBPROCESS !== '0';
        spec = runSpecOf(
          { ...input, viaSubprocess },
          {
            runId: made.runId,
            graph: graph.graph,
            models: graph.models,
            metricRanges: graph.metricRanges,
            activeWorkspaceDir: graphDirs.workspaceDir,
            codeTools: graph.codeTools,
          },
        );
        if (frozen?.audit) spec.audit = frozen.audit;
        if (spec.stopWhen?.against)
          await writeFrozenBaseline(made.dir, await frozenBaselineFor(spec, new RunReader(this.outputsDir), spec.stopWhen.against));
        await writeSpec(made.dir, spec);
        await recordRunManifest(made.dir, spec, graph.nodesets, graphDirs.workspaceDir);
        // The summary goes down before the (slow) host start, so a crash here still leaves a recoverable queued run.
        summary = queuedSummary(spec);
        await writeSummary(made.dir, summary);
      } catch (err) {
        // A refused write leaves no half-made run behind.
        if (made) await rm(made.dir, { recursive: true, force: true }).catch(() => {});
        const code = storageCodeOf(err);
        if (code === null) throw err;
        throw new StorageError(code, `cannot start a run: ${describeStorage(code, this.outputsDir)} (${errorMessage(err)})`, {
          cause: err,
        });
      }
      const { runId, dir } = made;
      let urls: Record<string, string>;
      try {
        urls = await acquireSharedHosts(this.ctx, graph.shared, runId);
      } catch (err) {
        await rm(dir, { recursive: true, force: true });
        throw new CodedError('HOST_ERROR', `could not start the shared hosts of graph "${input.graphName}": ${errorMessage(err)}`, {
          cause: err,
        });
      }
      await writeSharedUrls(dir, urls);
      // A scale-out run reserves nothing here: each worker admits its shards by its own resources.
      this.enqueue(this.newJob(spec, dir, estimate, graph.shared), summary);
      this.emit({ type: 'run', runId, summary });
      this.emit({ type: 'queue' });
      this.ticks.request();
      return summary;
    } finally {
      this.submitting--;
    }
  }

  /**
   * Queued: removed at once (CANCELLED + _DONE). Running: SIGTERM to its process group, SIGKILL
   * after cancelGraceMs; the reap finalises it. Idempotent: a run being cancelled or cancelled
   * already answers its summary, whenever the call comes; CONFLICT only for a run that ended
   * otherwise (the answer depends on how the run ended, never on how far the scheduler has got
   * with tidying up after it).
   */
  async cancel(runId: string): Promise<RunSummary> {
    assertRunId(runId);
    await this.start();
    const queued = this.queued.remove(runId);
    if (queued) {
      try {
        return await cancelQueuedJob(queued, this.ctx);
      } catch (err) {
        const code = storageCodeOf(err, queued.runDir);
        if (code === null) throw err;
        return this.cancelUnrecorded(queued, code);
      }
    }
    const job = this.running.get(runId);
    if (job) {
      if (!job.cancelRequested) {
        job.cancelRequested = true;
        this.log.info(`cancelling run ${runId}`);
        stopJob(job, this.ctx);
      }
      return answerCancel(runId, await currentSummary(job));
    }
    const ending = this.finishing.get(runId);
    if (ending) return answerCancel(runId, await ending.finalized!);
    const dir = runDirPath(this.outputsDir, runId);
    const unrecorded = this.unrecorded.get(runId)?.summary;
    // The end the disk refused is newer than summary.json.
    if (unrecorded) return answerCancel(runId, unrecorded);
    const known = this.catalog.getRun(runId)?.status;
    if (!existsSync(dir) && known === undefined) throw new NotFoundError(`run "${runId}"`);
    let summary: RunSummary | null = null;
    try {
      summary = await readSummary(dir);
    } catch {
      // keep the catalog's word
    }
    if (summary) return answerCancel(runId, summary);
    throw alreadyFinished(runId, this.catalog.getRun(runId)?.status ?? 'unknown');
  }

  /**
   * Queues a new attempt of a finished run that plays again its episodes that ended in
   * `endings` (default: the non-agent failures) and those that never ran (docs/retry.md). It
   * waits for admission like any run. CONFLICT while the run is queued, running or finishing;
   * NOTHING_TO_RETRY when no episode qualifies; QUEUE_FULL past the queue's capacity.
   */
  async retry(runId: string, endings?: readonly string[] | null): Promise<RetryResult> {
    this.assertOpen();
    assertRunId(runId);
    await this.start();
    return this.retryStarted(runId, endings);
  }

  /** `resumeInterrupted`: retries the runs the previous backend's stop left ABORTED (recovery has just finished them). */
  private async resumeInterrupted(): Promise<void> {
    const declined = await declinedRuns(this.outputsDir);
    for await (const { runId, summary } of this.interruptedRuns()) {
      if (declined(runId, summary.finishedAt))
        this.log.info(`run ${runId}: not resumed (a server started since without --resume left it ABORTED; evalctl retry takes it up)`);
      else await this.resume(runId);
    }
  }

  /** Without `resumeInterrupted`: notes the runs a backend's stop interrupted as left standing, so a later `--resume` does not take them up (resume-declined.ts). */
  private async declineInterrupted(): Promise<void> {
    const ends: Record<string, string> = {};
    for await (const { runId, summary } of this.interruptedRuns()) if (summary.finishedAt) ends[runId] = summary.finishedAt;
    if (!this.closing) await declineResume(this.outputsDir, ends);
  }

  /** The catalog's ABORTED runs that a backend's stop interrupted, with their summaries; ends early once the scheduler closes. */
  private async *interruptedRuns(): AsyncGenerator<{ runId: string; summary: RunSummary }> {
    for (const row of this.catalog.listRuns({ status: 'ABORTED' })) {
      if (this.closing) return;
      const summary = await readSummary(runDirPath(this.outputsDir, row.id)).catch(() => null);
      if (summary && interruptedByBackend(summary)) yield { runId: row.id, summary };
    }
  }

  private async resume(runId: string): Promise<void> {
    try {
      const r = await this.retryStarted(runId, null);
      this.log.info(`run ${runId}: resumed (attempt ${r.attempt}, ${r.retried.length} episode(s))`);
    } catch (err) {
      this.log.warn(`run ${runId}: could not be resumed: ${errorMessage(err)}`);
    }
  }

  private async retryStarted(runId: string, endings?: readonly string[] | null): Promise<RetryResult> {
    const wanted = retryEndingsOf(endings);
    const dir = this.getRunDir(runId);
    await this.settled(runId, dir);
    if (this.isBusy(runId)) {
      throw new ConflictError(`run ${runId} is not finished; retry it once it has ended`);
    }
    if (this.unrecorded.has(runId) || !isDone(dir))
      throw new ConflictError(`run ${runId} is not finished (no _DONE); retry it once it has ended`);
    if (this.queued.length + this.submitting >= this.settings.queueCapacity) throw new QueueFullError(this.settings.queueCapacity);
    // As at submit: refused, nothing moved, while the scale-out workers cannot be reached.
    await this.settings.remote?.assertReachable();
    this.retrying.add(runId);
    this.submitting++;
    try {
      const r = await queueRetry({
        runDir: dir,
        endings: wanted,
        graphDirs: this.settings.graphDirs,
        ctx: this.ctx,
        policy: this.settings.policy,
      });
      this.enqueue(this.newJob(r.spec, dir, r.estimate, r.shared), r.summary);
      this.log.info(`run ${runId}: attempt ${r.attempt} queued, re-running ${r.retried.length} episode(s)`);
      this.emit({ type: 'run', runId, summary: r.summary });
      this.emit({ type: 'queue' });
      this.ticks.request();
      return { summary: r.summary, attempt: r.attempt, retried: r.retried };
    } finally {
      this.submitting--;
      this.retrying.delete(runId);
    }
  }

  /**
   * A run whose process wrote its end (_DONE) but which the scheduler has not reaped and
   * finalised yet: waits for that (a tick away), so a retry asked for at the end is not refused.
   */
  private async settled(runId: string, dir: string): Promise<void> {
    const deadline = Date.now() + this.settings.cancelGraceMs + 5000;
    while (Date.now() < deadline) {
      const finishing = this.finishing.get(runId);
      if (finishing) {
        await finishing.finalized?.catch(() => {});
        continue;
      }
      if (!this.running.has(runId) || !isDone(dir)) return;
      this.ticks.request();
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** A run's final summary that the disk has not taken yet (full, read-only, or its dir deleted). */
  unrecordedSummary(runId: string): RunSummary | undefined {
    return this.unrecorded.get(runId)?.summary;
  }

  queue(): QueueEntry[] {
    return this.queued.map((j, i) => queueEntry(j, i + 1));
  }

  activeJobs(): ActiveJob[] {
    return [...this.running.values()].map(activeJob);
  }

  /**
   * The running runs a graceful stop waits for: those this server executes. Runs on the
   * scale-out fleet need this server's HTTP to commit, so a stop ends them ABORTED (committed
   * episodes kept, resumable with --resume) instead of waiting for them.
   */
  drainableRuns(): number {
    return this.settings.remote ? 0 : this.running.size;
  }

  resources(): ResourceSnapshot {
    return resourceSnapshot({
      sample: this.lastSample,
      sampledAt: this.lastSampleAt,
      staticCapacity: this.settings.staticCapacity,
      running: this.running.values(),
      lockHolder: this.lock.holder,
    });
  }

  /** The backend's shared nodeset hosts and who holds them. */
  sharedHosts(): SharedHostStatus[] {
    return this.hosts.list();
  }

  /**
   * The model endpoints the shared hosts call, with their limits now (each host's GET /stats);
   * a host that does not answer in time, or keeps no such figures, adds none.
   */
  async endpoints(signal?: AbortSignal): Promise<EndpointUse[]> {
    const timeout = AbortSignal.timeout(ENDPOINT_STATS_TIMEOUT_MS);
    const asked = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const lists = await Promise.all(
      Object.entries(this.hosts.urls()).map(([nodeset, url]) =>
        new HostClient(url).stats(asked).then(
          (s) => (s.endpoints ?? []).map((e) => ({ ...e, nodeset })),
          () => [],
        ),
      ),
    );
    return lists.flat();
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
    const release = this.lock.acquire(holder, () => {
      this.refreshReasons();
      this.ticks.request();
    });
    this.refreshReasons();
    return release;
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
      this.ticks.stop();
      await this.started?.catch(() => {});
      this.runsRootWatcher?.close();
      await this.ticks.settled();
      await this.rss.settled();
      const jobs = [...this.running.values()];
      const stopping: Job[] = [];
      for (const job of jobs) {
        if (options.cancelRunning || !job.viaSubprocess) {
          if (!job.cancelRequested) {
            job.cancelRequested = true;
            stopJob(job, this.ctx);
          }
          stopping.push(job);
        } else {
          job.child?.detach();
        }
      }
      await waitForExits(stopping, this.settings.cancelGraceMs + 3000);
      for (const job of jobs) {
        if (job.exit && this.running.has(job.runId)) this.reapJob(job);
      }
      await Promise.allSettled([...this.finishing.values()].map((j) => j.finalized));
      await Promise.allSettled(this.background);
      for (const job of this.running.values()) if (job.killTimer) clearTimeout(job.killTimer);
      await this.hosts.close().catch((err: unknown) => this.log.warn(`stopping shared hosts: ${errorMessage(err)}`));
      this.hostStarter.close();
      if (this.settings.ownsSampler) this.settings.sampler.close?.();
      await this.catalogRef?.close();
      this.listeners.clear();
    })();
    return this.closing;
  }

  /** Runs a tick now (coalesced with one in progress). */
  tick(): Promise<void> {
    return this.ticks.tick();
  }

  private async runTick(): Promise<void> {
    this.stopRunsWithoutDir();
    this.failQueuedWithoutDir();
    this.stopHungRuns();
    let changed = this.reap();
    changed = (await this.admit()) || changed;
    this.hosts.drainIdle();
    this.hosts.checkHealth();
    if (changed) this.emit({ type: 'queue' });
    this.rss.poke([...this.running.values()]);
    await retryUnrecorded(this.ctx);
    // Runs written by others (`evalctl run` into the same outputs) and dirs deleted by hand.
    const synced = await this.catalog
      .syncRunDirs((id) => this.isBusy(id) || this.unrecorded.has(id))
      .catch((err: unknown) => {
        this.log.warn(`catalog: scanning the run directories: ${errorMessage(err)}`);
        return false;
      });
    // A run that appeared, moved on or went away outside this scheduler reaches the runs lists listening for queue changes.
    if (synced) this.emit({ type: 'queue' });
  }

  /** Keeps `work` (which handles its own errors) until it settles, for close() to wait on. */
  private inBackground(work: Promise<unknown>): void {
    this.background.add(work);
    void work.finally(() => this.background.delete(work));
  }

  /** Queued, running, finishing, or having its retry prepared: the scheduler writes its row. */
  private isBusy(runId: string): boolean {
    return this.queued.has(runId) || this.running.has(runId) || this.finishing.has(runId) || this.retrying.has(runId);
  }

  /** A queued run cancelled while the disk refuses writes: CANCELLED in memory, written by a later tick. */
  private cancelUnrecorded(job: Job, code: StorageCode): RunSummary {
    const base = job.queuedSummary ?? queuedSummary(job.spec);
    const summary: RunSummary = { ...base, seq: base.seq + 1, status: 'CANCELLED', finishedAt: new Date().toISOString(), error: null };
    this.unrecorded.set(job.runId, { runDir: job.runDir, summary, summaryOnDisk: false });
    this.log.warn(
      `run ${job.runId}: cancelled, but ${describeStorage(code, job.runDir)}; its end is kept in memory and written once the disk takes it`,
    );
    this.hosts.release(job.runId);
    this.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess }));
    this.emit({ type: 'run', runId: job.runId, summary });
    this.emit({ type: 'queue' });
    this.ticks.request();
    return summary;
  }

  /** A running run whose directory was deleted is stopped now, not at its next write (an episode may be long). */
  private stopRunsWithoutDir(): void {
    for (const job of this.running.values()) {
      if (job.storageFault || job.exit || job.state !== 'running' || existsSync(job.runDir)) continue;
      job.storageFault = 'RUN_DIR_MISSING';
      this.log.warn(`run ${job.runId}: ${describeStorage('RUN_DIR_MISSING', job.runDir)} while it ran; stopping it`);
      stopJob(job, this.ctx);
    }
  }

  /**
   * A queued run whose directory was deleted fails now, FAILED RUN_DIR_MISSING, not when it is
   * admitted (with whatever error its first write met). Its end stays in memory: there is no folder to write it to.
   */
  private failQueuedWithoutDir(): void {
    for (const job of [...this.queued]) {
      if (existsSync(job.runDir) || !this.queued.remove(job.runId)) continue;
      const base = job.queuedSummary ?? queuedSummary(job.spec);
      const message = `${describeStorage('RUN_DIR_MISSING', job.runDir)} while the run was queued`;
      const summary: RunSummary = {
        ...base,
        seq: base.seq + 1,
        status: 'FAILED',
        finishedAt: new Date().toISOString(),
        error: { code: 'RUN_DIR_MISSING', message },
      };
      this.unrecorded.set(job.runId, { runDir: job.runDir, summary, summaryOnDisk: false });
      this.log.warn(`run ${job.runId}: ${message}; failed`);
      this.hosts.release(job.runId);
      this.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess }));
      this.emit({ type: 'run', runId: job.runId, summary });
      this.emit({ type: 'queue' });
    }
  }

  /**
   * A running run whose eval process has sent nothing for `evalHungMs` is stopped (SIGTERM, then
   * SIGKILL after the grace: a stopped process only dies of the SIGKILL) and ends ABORTED, HUNG.
   * Not judged by a tick that comes late: this process's own event loop was held, and the
   * heartbeats may be waiting unread on the channels.
   */
  private stopHungRuns(): void {
    const now = performance.now();
    const previous = this.lastTickAtMs;
    this.lastTickAtMs = now;
    const limit = this.settings.evalHungMs;
    if (limit <= 0 || previous === null || now - previous > Math.max(limit / 2, this.settings.tickIntervalMs * 2)) return;
    for (const job of this.running.values()) {
      if (!isHung(job, this.ctx, now)) continue;
      this.log.warn(
        `run ${job.runId}: its eval process (pid ${job.pid}) sent no heartbeat for ${Math.round(job.hung!.silentMs / 1000)} s (limit ${limit / 1000} s); killing it, the run ends ABORTED (HUNG)`,
      );
      stopJob(job, this.ctx);
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
      .then(() => finalizeJob(job, this.ctx))
      .finally(() => {
        this.finishing.delete(job.runId);
      });
    job.finalized.catch((err: unknown) => this.log.error(`finalising run ${job.runId}: ${errorMessage(err)}`));
    // An eval process adopted at start that then stopped because the old backend was gone: resumed too.
    if (job.adopted) {
      this.inBackground(
        job.finalized
          .then((s) => {
            if (!interruptedByBackend(s) || this.closing) return;
            if (this.settings.resumeInterrupted) return this.resume(job.runId);
            if (s.finishedAt) return declineResume(this.outputsDir, { [job.runId]: s.finishedAt });
          })
          .catch(() => {}),
      );
    }
  }

  /** Starts every queued job that fits; updates the others' waiting reasons. */
  private async admit(): Promise<boolean> {
    const { sampler, staticCapacity, starvationMs } = this.settings;
    let sample: ResourceSample;
    try {
      sample = await sampler.sample();
    } catch (err) {
      this.log.warn(`resource sample failed: ${errorMessage(err)}`);
      sample = UNMEASURED;
    }
    this.lastSample = sample;
    this.lastSampleAt = new Date();
    if (this.closing) return false;
    const now = Date.now();
    const plan = planAdmission({
      queue: this.queued.map(admissionCandidate),
      running: [...this.running.values()].map(runningReservation),
      capacity: {
        ramFreeMb: sample.ramFreeMb,
        vramFreeMb: sample.vramFreeMb,
        ramTotalMb: sample.ramTotalMb,
        vramTotalMb: sample.vramTotalMb,
        staticRamMb: staticCapacity.ramMb,
        staticVramMb: staticCapacity.vramMb,
        cores: this.settings.cores,
      },
      lockHolder: this.lock.holder,
      now,
      starvationMs,
    });
    let changed = false;
    for (const job of this.queued) {
      const v = plan.waiting.get(job.runId);
      if (!v) continue;
      if (v.waitingReason !== job.waitingReason || v.reserving !== job.reserving) changed = true;
      job.waitingReason = v.waitingReason;
      job.reserving = v.reserving;
      if (job.skippedSinceMs === null && !this.lock.held) job.skippedSinceMs = now;
    }
    if (plan.admit.length === 0) return changed;
    const jobs = this.queued.take(new Set(plan.admit));
    for (const job of jobs) {
      job.state = 'starting';
      job.startedAt = new Date().toISOString();
      this.running.set(job.runId, job);
    }
    await Promise.all(jobs.map((job) => launchJob(job, this.ctx)));
    return true;
  }

  /** Every new job (submit, retry, recovery): a run for the scale-out fleet reserves nothing here. */
  private newJob(spec: RunSpec, runDir: string, estimate: ResourceEstimate, shared: string[]): Job {
    return createJob(spec, runDir, this.settings.remote ? REMOTE_ESTIMATE : estimate, shared, this.nextOrder++);
  }

  /** Queues a new or recovered job; `summary` is its summary.json as just written. */
  private enqueue(job: Job, summary: RunSummary): void {
    job.queuedSummary = summary;
    job.waitingReason = this.queued.joiningReason(job, this.lock.holder);
    this.queued.insert(job);
    // A fresh run's labels are its spec's; a recovered one keeps those the catalog read (labels.json wins).
    const labels = this.catalog.getRun(job.runId)?.labels ?? labelsOf(job.spec);
    this.catalog.upsertRun({ ...catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess }), labels });
  }

  private refreshReasons(): void {
    const holder = this.lock.holder;
    if (holder !== null) for (const j of this.queued) j.waitingReason = lockedReason(holder);
    this.emit({ type: 'queue' });
  }

  /** A shared host came back on a new URL: queued runs get it in shared_urls.json, running ones by message. */
  private async sharedHostMoved(nodeset: string, url: string): Promise<void> {
    const secret = hostSecretFor(url);
    const message: BackendToEvalMessage = { type: 'sharedHostMoved', nodeset, url, ...(secret !== undefined ? { secret } : {}) };
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

/** A cancel's answer: the run while it stops or once it is CANCELLED; CONFLICT when it ended some other way. */
function answerCancel(runId: string, summary: RunSummary): RunSummary {
  if (isTerminalRunStatus(summary.status) && summary.status !== 'CANCELLED') throw alreadyFinished(runId, summary.status);
  return summary;
}

function alreadyFinished(runId: string, status: string): ConflictError {
  return new ConflictError(`run ${runId} has already finished (${status}); only a queued or running run can be cancelled`);
}
