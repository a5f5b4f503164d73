/**
 * runBatch: one run, start to finish, from its run directory. Used by the eval process
 * (main.ts), by the backend's in-process path and by the CLI. Reads spec.json and
 * shared_urls.json, builds its own registry, freezes the graph into graph.json, starts the
 * hosts it owns, runs the episodes, and in every case stops its hosts, writes the final
 * summary and touches `_DONE`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CodedError, errorMessage } from '../errors.js';
import { applyOverrides, parseGraph, validateGraph } from '../graph/graph.js';
import { GraphCatalog } from '../graph/graph-catalog.js';
import { NodesetRegistry } from '../nodeset-registry/registry.js';
import { placedNodesets } from '../nodeset-registry/placement.js';
import type { GraphSpec } from '../core/types.js';
import type { RunStatus } from '../statuses.js';
import { readJson, writeJsonAtomic } from '../store/atomic.js';
import { SpecInvalidError } from '../spec/spec-errors.js';
import { describeConcurrency, runConcurrency } from '../spec/run-concurrency.js';
import { availableParallelism } from 'node:os';
import { episodeIndicesOf } from '../spec/shards.js';
import { FILES, readSharedUrls, readSpec, readSummary, touchDone, writeSummary } from '../store/run-dir.js';
import { writeReport } from '../store/report.js';
import { recordReportedModels } from '../store/run-manifest.js';
import { writeScoreIndexOfSummary } from '../compare/score-index.js';
import { pendingIndicesOf, putBackUnplayed, readAttempts } from '../store/attempts.js';
import type { EpisodeRecord, RunSpec, RunSummary, SharedUrls } from '../store/types.js';
import { storageCodeOf } from '../store/storage-fault.js';
import { BatchEvalRunner, type StepListener } from './batch-eval-runner.js';
import { envPanelOf } from './env-panel-target.js';
import { EpisodeCursor } from './episode-cursor.js';
import { playLaneCount, splitWorkers, startPlayLanes, type PlayLanes } from './play-lanes.js';
import type { HostInfo } from './env-worker-pool.js';
import { startRunHosts, type RunHosts } from './run-hosts.js';
import { loadDistributions } from '../stats/distributions.js';
import { SummaryWriter } from './summary-writer.js';
import { activeTracing } from '../tracing/tracing.js';
import type { RunSpan } from '../tracing/spans.js';
import { runSpanInfo } from './run-span-info.js';
import { runPreflights } from './run-preflights.js';
import { infraFailureOf, type PlayEnding } from '../store/infra-failure.js';
import { hasRecordsFile, readRecords } from '../store/records-file.js';
import { readFrozenBaseline } from '../compare/frozen-baseline.js';
import { EarlyStop, type EarlyStopOptions } from './early-stop.js';
import { stopRuleOf } from '../compare/stop-rule.js';

export interface RunBatchOptions {
  /** The run directory holding spec.json (and shared_urls.json when the backend lends hosts). */
  runDir: string;
  /**
   * Stops the run: dispatch stops, in-flight episodes end CANCELLED, the summary says
   * CANCELLED — or ABORTED when the abort reason is an CodedError with code ABORTED.
   */
  signal?: AbortSignal;
  /** Shared nodeset hosts to borrow (never stopped). @default the contents of shared_urls.json */
  sharedUrls?: SharedUrls;
  /** After each episode, with the summary that includes it. */
  onEpisode?(record: EpisodeRecord, summary: RunSummary): void;
  /** When an episode's folder is complete on disk, before the summary includes it (a scale-out worker commits it then). */
  onEpisodeWritten?(record: EpisodeRecord): void;
  /** At the start, after each episode and at the end (summary.json itself is rewritten at most every 250 ms in between). */
  onSummary?(summary: RunSummary): void;
  /** When an episode starts on a worker. */
  onEpisodeStart?(info: { index: number; workerId: number }): void;
  /** Once every host is up (worker 0 may have started episodes already). */
  onHostsReady?(hosts: HostInfo[]): void;
  /** Each host this run starts, as soon as it is up, respawns included. */
  onHostStarted?(host: HostInfo): void;
  /**
   * Called once the shared hosts are registered, with a function that re-points a borrowed
   * shared nodeset at a new URL (its host was restarted there) for the rest of the run.
   */
  bindSharedHostMover?(move: (nodeset: string, url: string) => void): void;
  /** Per-node progress events; off unless given (batch runs stay quiet). */
  onStep?: StepListener;
  /** Lines for the run's log (host stderr, start-up timings). @default nothing */
  log?(line: string): void;
  /** Built-in nodesets and graphs folders. @default the package's */
  builtinNodesetsDir?: string;
  builtinGraphsDir?: string;
  /**
   * With play lanes: every lane, this thread's included, starts playing once all of them are up,
   * so even a run of a few quick episodes reaches every worker (tests that check every worker
   * played rely on it). @default false: each lane plays as soon as it is up
   */
  lanesTogether?: boolean;
  /** Extra environment for every host this run starts. */
  hostEnv?: Record<string, string>;
  /** CPU cores the hosts' boot is planned for (see startRunHosts). @default os.availableParallelism() */
  cores?: number;
  /**
   * With tracing on: the run span (a W3C traceparent) that another process owns and this run's
   * episode spans go under. @default a run span of this run's own
   */
  traceparent?: string;
}

/** Runs the batch described by `runDir`; resolves with the final summary, its records read back from records.jsonl (never rejects for a run that failed). */
export async function runBatch(opts: RunBatchOptions): Promise<RunSummary> {
  const { runDir } = opts;
  const log = opts.log ?? (() => {});
  let spec: RunSpec;
  try {
    spec = await readSpec(runDir);
  } catch (err) {
    if (err instanceof SpecInvalidError) return failOnSpec(runDir, err, opts);
    throw err;
  }
  const summary = await SummaryWriter.open(runDir, spec);
  // A retry (store/attempts.ts) plays only its attempt's indices; the other records stay as they are.
  const retryIndices = pendingIndicesOf(await readAttempts(runDir));
  if (retryIndices) {
    const replaced = new Set(retryIndices);
    if (hasRecordsFile(runDir)) {
      for await (const r of readRecords(runDir)) if (!replaced.has(r.index)) summary.keep([r]);
    } else {
      // A retry prepared before records.jsonl existed: the kept records are only in summary.json.
      const before = await readSummary(runDir).catch(() => null);
      summary.putBack((before?.episodes ?? []).filter((r) => !replaced.has(r.index)));
    }
  }
  const emit = (s: RunSummary): RunSummary => {
    opts.onSummary?.(s);
    return s;
  };
  emit(await summary.start());
  // What has finished before a stop reaches the disk at once, even if winding down then takes long.
  const flushOnStop = () => void summary.flush().catch(() => {});
  opts.signal?.addEventListener('abort', flushOnStop, { once: true });
  const span = runSpanOf(spec, opts.traceparent);

  let registry: NodesetRegistry | undefined;
  let hosts: RunHosts | undefined;
  /** The run's other play lanes (play-lanes.ts), and the first error one of them failed with. */
  let others: PlayLanes | undefined;
  let laneError: Error | undefined;
  /** A stopWhen run's watch, once the hand-out order is known; `stopping` is aborted when it decides. */
  let early: EarlyStop | undefined;
  const stopping = new AbortController();
  // Fed as each record is built, not once its files are written: writes run behind the play, and the stop must not wait for them.
  const onRecord = (record: EpisodeRecord): void => {
    if (!early) return;
    const read = early.read;
    early.add(record);
    if (early.read !== read) summary.setStopWhen(early.state());
  };
  const episodeDone = (record: EpisodeRecord, s: RunSummary): void => {
    opts.onEpisode?.(record, s);
    emit(s);
  };
  let status: RunStatus = 'COMPLETED';
  let error: { code: string; message: string } | null = null;
  try {
    const workspaceDir = spec.activeWorkspaceDir ?? (process.env.ACTIVE_WORKSPACE_DIR || undefined);
    registry = await NodesetRegistry.scan({
      ...(opts.builtinNodesetsDir ? { builtinDir: opts.builtinNodesetsDir } : {}),
      ...(workspaceDir ? { workspaceDir } : {}),
    });
    const graphSpec = await freezeGraph(runDir, spec, workspaceDir, opts.builtinGraphsDir);
    // Read before any host boots: a baseline that cannot be read, or a rule naming nothing, fails the run now.
    const stopPlan =
      spec.stopWhen && !retryIndices && !spec.shard && !spec.audit && !spec.episodeIndices ? await stopPlanOf(runDir, spec) : null;
    const graph = validateGraph(graphSpec, registry);
    const used = placedNodesets(graph, registry);
    const playCount = (retryIndices ?? episodeIndicesOf(spec)).length;
    const concurrency = runConcurrency(spec, graph, used, playCount);
    log(describeConcurrency(concurrency));
    const shared = used.filter((e) => e.manifest.parallelism === 'shared');
    const replicated = used.filter((e) => e.manifest.parallelism === 'replicated');
    // Before any host boots: a dependency that does not answer fails the run now, not every episode later.
    if (spec.preflight !== false) {
      const checked = performance.now();
      await runPreflights(graph, used, { env: { ...process.env, ...opts.hostEnv }, signal: opts.signal });
      if (used.some((e) => e.manifest.preflight)) log(`preflight passed in ${Math.round(performance.now() - checked)} ms`);
    }

    const t0 = performance.now();
    const hostsSpan = span?.phase('hosts.start');
    const lent = opts.sharedUrls ?? (await readSharedUrls(runDir));
    // The run's workspace reaches its hosts too (env_dataset reads its datasets there), also when this process's environment has another.
    const hostEnv =
      opts.hostEnv || workspaceDir ? { ...opts.hostEnv, ...(workspaceDir ? { ACTIVE_WORKSPACE_DIR: workspaceDir } : {}) } : undefined;
    const { workers } = concurrency;
    const cores = opts.cores ?? availableParallelism();
    const lanes = playLaneCount({
      used,
      lent,
      env: hostEnv,
      workers,
      // Threads beyond the machine's cores only take turns; `cores` may plan boots for a bigger machine.
      cores: Math.min(cores, availableParallelism()),
      stepEvents: opts.onStep !== undefined,
    });
    const counts = splitWorkers(workers, lanes);
    // The other lanes boot (their registry, graph and hosts) while this thread boots its own and plans the order; they play once told it.
    const cursorBuffer = EpisodeCursor.bufferFor(workers);
    /** Aborted when another lane fails: this thread's workers stop as they would on a fatal error of their own. */
    const laneFailure = new AbortController();
    others =
      lanes > 1
        ? startPlayLanes({
            runDir,
            spec,
            graph: graphSpec,
            counts,
            maxInFlight: concurrency.maxInFlight,
            cursor: cursorBuffer,
            cores,
            lent,
            ...(span ? { traceparent: span.traceparent } : {}),
            ...(hostEnv ? { env: hostEnv } : {}),
            nodesets: registry.list(),
            addEpisode: async (record) => episodeDone(record, await summary.addEpisode(record)),
            retireWorker: (workerId, reason) => {
              summary.retireWorker(workerId, reason);
              log(`worker ${workerId} retired: ${reason}; the other workers play its episodes`);
            },
            ...(opts.onEpisodeStart ? { onEpisodeStart: opts.onEpisodeStart } : {}),
            ...(opts.onEpisodeWritten ? { onEpisodeWritten: opts.onEpisodeWritten } : {}),
            ...(stopPlan ? { onRecord } : {}),
            log,
            ...(opts.lanesTogether ? { together: true } : {}),
            onFailure: (err) => {
              laneError ??= err;
              laneFailure.abort(err);
              others?.stop(err);
            },
          })
        : undefined;
    const starting = startRunHosts({
      registry,
      shared,
      replicated,
      lent,
      ...(hostEnv ? { env: hostEnv } : {}),
      // With lanes, this thread's share of the workers; the other lanes start hosts of their own.
      workerCount: counts[0]!,
      ...(lanes > 1 ? { tagged: true } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      onStderr: log,
      ...(opts.onHostStarted ? { onHostStarted: opts.onHostStarted } : {}),
      cores,
    });
    // While the hosts boot this thread waits anyway: load the statistics the summaries need now, not in the first summary write mid-run.
    loadDistributions();
    hosts = await starting;
    hostsSpan?.end();
    const { pool, sharedUrls } = hosts;
    log(`worker 0's hosts ready in ${Math.round(performance.now() - t0)} ms`);
    const started = hosts;
    void pool.allReady().then(
      () => {
        const list = started.list();
        log(`all ${list.length} host(s) ready in ${Math.round(performance.now() - t0)} ms`);
        opts.onHostsReady?.(list);
      },
      () => {},
    );

    const signals = [opts.signal, lanes > 1 ? laneFailure.signal : undefined, stopPlan ? stopping.signal : undefined].filter(
      (x): x is AbortSignal => x !== undefined,
    );
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const envPanel = envPanelOf(used);
    const runner = new BatchEvalRunner({
      spec,
      runDir,
      graph,
      pool,
      summary,
      runWorkerCount: workers,
      concurrency,
      sharedUrls,
      lentNodesets: shared.filter((e) => lent[e.name]).map((e) => e.name),
      log,
      ...(envPanel ? { envPanel } : {}),
      // A partial run (evalctl run --shard) plays only its task's shards, under their run indices.
      // A scale-out worker's shard and an audit play the indices their spec lists; a retry, those its attempt lists.
      ...(retryIndices
        ? { episodeIndices: retryIndices }
        : spec.shard || spec.audit || spec.episodeIndices
          ? { episodeIndices: episodeIndicesOf(spec) }
          : {}),
      ...(signal ? { signal } : {}),
      ...(opts.onEpisodeStart ? { onEpisodeStart: opts.onEpisodeStart } : {}),
      ...(opts.onEpisodeWritten ? { onEpisodeWritten: opts.onEpisodeWritten } : {}),
      onEpisode: episodeDone,
      ...(stopPlan ? { onRecord } : {}),
      ...(opts.onStep ? { onStep: opts.onStep } : {}),
      ...(span ? { trace: span } : {}),
    });
    opts.bindSharedHostMover?.((nodeset, url) => {
      if (!started.moveShared(nodeset, url)) return;
      runner.moveSharedHost(nodeset, url);
      others?.move(nodeset, url);
      log(`shared nodeset ${nodeset} moved to ${url}`);
    });
    await runner.checkSelection();
    // Priced on worker 0's env host before the others boot: on a small machine their start would slow it.
    await runner.planDispatch();
    const cursor = new EpisodeCursor(runner.order, cursorBuffer);
    if (stopPlan) {
      const order = typeof runner.order === 'number' ? Array.from({ length: runner.order }, (_, i) => i) : runner.order;
      early = new EarlyStop({
        order,
        ...stopPlan,
        metricRanges: spec.metricRanges,
        onStop: (d) => {
          log(`stopWhen: stopped at episode ${d.atEpisode} of ${order.length} (${d.reason}${d.verdict ? `, ${d.verdict}` : ''})`);
          const reason = new Error('the run stopped early (stopWhen)');
          stopping.abort(reason);
          others?.stop(reason);
          flushOnStop();
        },
      });
      summary.setStopWhen(early.state());
    }
    others?.go(runner.order);
    if (others) log(`playing in ${lanes} lanes (workers ${counts.join(' + ')})`);
    const stopOthers = () => others?.stop(opts.signal?.reason);
    opts.signal?.addEventListener('abort', stopOthers, { once: true });
    pool.startOthers();
    if (others && opts.lanesTogether) {
      await others.allClaimed;
      others.start();
    }
    try {
      await runner.execute(cursor);
    } catch (err) {
      // A lane's failure is the run's error (this thread's workers only stopped for it).
      if (!laneError) throw err;
    } finally {
      opts.signal?.removeEventListener('abort', stopOthers);
    }
    // The cursor is drained: a lane still booting has nothing left to play.
    others?.dropIdle();
    await others?.done;
    if (laneError && !opts.signal?.aborted) throw laneError;
    if (early?.stoppedEarly) await cancelOutsidePrefix(runDir, summary, early.outsidePrefix());
    if (opts.signal?.aborted) ({ status, error } = stoppedBy(opts.signal.reason));
  } catch (err) {
    if (opts.signal?.aborted) {
      ({ status, error } = stoppedBy(opts.signal.reason));
    } else {
      status = 'FAILED';
      error = {
        code: err instanceof CodedError ? err.code : (storageCodeOf(err, runDir) ?? 'INTERNAL_SERVER_ERROR'),
        message: errorMessage(err),
      };
      log(`run failed: ${error.message}`);
    }
  } finally {
    opts.signal?.removeEventListener('abort', flushOnStop);
    // On every way out the other lanes stop (they may not have been told to play yet) and their records are in.
    if (others) {
      others.dropIdle();
      others.stop(opts.signal?.reason ?? new Error('the run ended'));
      await others.done;
    }
    await hosts?.close();
    registry?.close();
  }
  // A retry stopped before it played all it was to play: the earlier records of the rest come back.
  if (status !== 'COMPLETED')
    summary.putBack(
      await putBackUnplayed(runDir, (index) => summary.has(index)).catch((err: unknown): EpisodeRecord[] => {
        log(`earlier records not put back: ${errorMessage(err)}`);
        return [];
      }),
    );
  // A whole run only: a partial's plays are judged where they are joined.
  if (status === 'COMPLETED' && !spec.shard && !spec.audit && !spec.episodeIndices) {
    await summary.flush();
    const infra = infraFailureOf(await playEndings(runDir), spec.maxInfraErrorRate);
    if (infra) {
      status = 'FAILED';
      error = infra;
      log(`run failed: ${infra.message}`);
    }
  }
  const final = emit(await summary.finish(status, error));
  span?.end(final.status, final.error);
  await recordReportedModels(runDir, await reportedModelsOf(runDir)).catch((err: unknown) =>
    log(`manifest.json: reported models not written: ${errorMessage(err)}`),
  );
  // The report and the score index are built over the whole list of records, read once here.
  const full = await readSummary(runDir).catch(() => null);
  if (full) {
    // Before _DONE, so whoever waits for the run finds its report; a report that cannot be built does not fail the run.
    await writeReport(runDir, full).catch((err: unknown) => log(`report.json not written: ${errorMessage(err)}`));
    // So the first comparison of this run reads its scores, not megabytes of records; without it, that comparison builds it.
    await writeScoreIndexOfSummary(runDir, full).catch((err: unknown) => log(`score-index.json not written: ${errorMessage(err)}`));
  }
  await touchDone(runDir);
  return full ? { ...full, seq: final.seq } : final;
}

/** Each play's index, ending and (for INFRA_ERROR only) error, streamed from records.jsonl: what infraFailureOf reads. */
async function playEndings(runDir: string): Promise<PlayEnding[]> {
  const out: PlayEnding[] = [];
  for await (const r of readRecords(runDir))
    out.push(r.status === 'INFRA_ERROR' ? { index: r.index, status: r.status, error: r.error } : { index: r.index, status: r.status });
  return out;
}

/** The records' reportedModels, streamed from records.jsonl (records without any are skipped). */
async function reportedModelsOf(runDir: string): Promise<Array<Pick<EpisodeRecord, 'reportedModels'>>> {
  const out: Array<Pick<EpisodeRecord, 'reportedModels'>> = [];
  for await (const r of readRecords(runDir)) if (r.reportedModels) out.push({ reportedModels: r.reportedModels });
  return out;
}

/** A stopWhen run's rule and frozen baseline. */
async function stopPlanOf(runDir: string, spec: RunSpec): Promise<Pick<EarlyStopOptions, 'rule' | 'baseline'>> {
  const stopWhen = spec.stopWhen!;
  const rule = stopRuleOf(stopWhen, spec.metricRanges);
  const baseline = stopWhen.against === undefined ? null : await readFrozenBaseline(runDir);
  return { rule, baseline };
}

/**
 * Records every play outside the stopping prefix CANCELLED (those in flight at the stop already
 * are): a play that finished past the prefix on a fast worker must not enter the statistics, or
 * they would depend on the worker count.
 */
async function cancelOutsidePrefix(runDir: string, summary: SummaryWriter, outside: ReadonlySet<number>): Promise<void> {
  await summary.appended();
  // Read first, then replaced: at most the plays in flight at the stop, and the file is not read while it grows.
  const played: EpisodeRecord[] = [];
  for await (const r of readRecords(runDir)) if (outside.has(r.index) && r.status !== 'CANCELLED') played.push(r);
  for (const r of played)
    await summary.addEpisode({ ...r, status: 'CANCELLED', error: 'played past the prefix the run stopped at (stopWhen)' });
}

/** The run's span when tracing is on: under `traceparent` when another process owns the run span. */
function runSpanOf(spec: RunSpec, traceparent: string | undefined): RunSpan | undefined {
  const tracing = activeTracing();
  if (!tracing) return undefined;
  const info = runSpanInfo(spec);
  return traceparent ? tracing.joinRun(info, traceparent) : tracing.startRun(info);
}

/**
 * A spec.json that is not a valid spec: the run ends FAILED with SPEC_INVALID naming the field,
 * on the summary written at submit (there is no spec to start one from).
 */
async function failOnSpec(runDir: string, err: SpecInvalidError, opts: RunBatchOptions): Promise<RunSummary> {
  opts.log?.(`run failed: ${err.message}`);
  const base = await readSummary(runDir).catch(() => null);
  if (!base) throw err;
  const now = new Date().toISOString();
  const final: RunSummary = {
    ...base,
    seq: base.seq + 1,
    status: 'FAILED',
    error: { code: err.code, message: err.message },
    startedAt: base.startedAt ?? now,
    finishedAt: now,
  };
  delete final.pid;
  await writeSummary(runDir, final);
  opts.onSummary?.(final);
  await touchDone(runDir);
  return final;
}

/** A stop on request is CANCELLED; one whose reason is an ABORTED error (the parent died) is ABORTED, saying why. */
function stoppedBy(reason: unknown): { status: RunStatus; error: { code: string; message: string } | null } {
  if (reason instanceof CodedError && reason.code === 'ABORTED')
    return { status: 'ABORTED', error: { code: 'ABORTED', message: reason.message } };
  return { status: 'CANCELLED', error: null };
}

/**
 * The run's graph with its overrides applied: the one frozen into the spec at submit, also
 * written to graph.json for people and tools. A spec written before graphs were frozen at
 * submit has none: then a graph.json already in the run dir is the frozen graph, else the
 * graph is loaded now and written there.
 */
async function freezeGraph(
  runDir: string,
  spec: RunSpec,
  workspaceDir: string | undefined,
  builtinDir: string | undefined,
): Promise<GraphSpec> {
  const path = join(runDir, FILES.graph);
  if (spec.graph) {
    if (!existsSync(path)) await writeJsonAtomic(path, spec.graph);
    return spec.graph;
  }
  if (existsSync(path)) return parseGraph(await readJson<unknown>(path), path);
  const catalog = new GraphCatalog({ ...(builtinDir ? { builtinDir } : {}), ...(workspaceDir ? { workspaceDir } : {}) });
  const source = await catalog.load(spec.graphName);
  const frozen = applyOverrides(source, spec.overrides);
  await writeJsonAtomic(path, frozen);
  return frozen;
}
