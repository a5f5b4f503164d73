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
import { applyOverrides, parseGraph, validateGraph, type ValidatedGraph } from '../graph/graph.js';
import { GraphCatalog } from '../graph/graph-catalog.js';
import { NodesetRegistry, type NodesetEntry } from '../nodeset-registry/registry.js';
import type { GraphSpec } from '../core/types.js';
import type { RunStatus } from '../statuses.js';
import { readJson, writeJsonAtomic } from '../store/atomic.js';
import { SpecInvalidError } from '../spec/spec-errors.js';
import { effectiveWorkerCount } from '../spec/effective-workers.js';
import { episodeIndicesOf } from '../spec/shards.js';
import { FILES, readSharedUrls, readSpec, readSummary, touchDone, writeSummary } from '../store/run-dir.js';
import { writeReport } from '../store/report.js';
import type { EpisodeRecord, RunSpec, RunSummary, SharedUrls } from '../store/types.js';
import { storageCodeOf } from '../store/storage-fault.js';
import { BatchEvalRunner, type EnvPanelTarget, type StepListener } from './batch-eval-runner.js';
import type { HostInfo } from './env-worker-pool.js';
import { startRunHosts, type RunHosts } from './run-hosts.js';
import { SummaryWriter } from './summary-writer.js';

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
  /** After every summary.json rewrite (start, each episode, the end). */
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
  /** Extra environment for every host this run starts. */
  hostEnv?: Record<string, string>;
}

/** Runs the batch described by `runDir`; resolves with the final summary (never rejects for a run that failed). */
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
  const emit = (s: RunSummary): RunSummary => {
    opts.onSummary?.(s);
    return s;
  };
  emit(await summary.start());

  let registry: NodesetRegistry | undefined;
  let hosts: RunHosts | undefined;
  let status: RunStatus = 'COMPLETED';
  let error: { code: string; message: string } | null = null;
  try {
    const workspaceDir = spec.activeWorkspaceDir ?? (process.env.ACTIVE_WORKSPACE_DIR || undefined);
    registry = await NodesetRegistry.scan({
      ...(opts.builtinNodesetsDir ? { builtinDir: opts.builtinNodesetsDir } : {}),
      ...(workspaceDir ? { workspaceDir } : {}),
    });
    const graphSpec = await freezeGraph(runDir, spec, workspaceDir, opts.builtinGraphsDir);
    const graph = validateGraph(graphSpec, registry);
    const used = nodesetsOf(graph, registry);
    const shared = used.filter((e) => e.manifest.parallelism === 'shared');
    const replicated = used.filter((e) => e.manifest.parallelism === 'replicated');

    const t0 = performance.now();
    hosts = await startRunHosts({
      registry,
      shared,
      replicated,
      lent: opts.sharedUrls ?? (await readSharedUrls(runDir)),
      // The run's workspace reaches its hosts too (env_dataset reads its datasets there), also when this process's environment has another.
      ...(opts.hostEnv || workspaceDir
        ? { env: { ...opts.hostEnv, ...(workspaceDir ? { ACTIVE_WORKSPACE_DIR: workspaceDir } : {}) } }
        : {}),
      workerCount: Math.max(1, Math.min(effectiveWorkerCount(spec), episodeIndicesOf(spec).length)),
      ...(opts.signal ? { signal: opts.signal } : {}),
      onStderr: log,
      ...(opts.onHostStarted ? { onHostStarted: opts.onHostStarted } : {}),
    });
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

    const envPanel = envPanelOf(replicated);
    const runner = new BatchEvalRunner({
      spec,
      runDir,
      graph,
      pool,
      summary,
      sharedUrls,
      ...(envPanel ? { envPanel } : {}),
      // A partial run (evalctl run --shard) plays only its task's shards, under their run indices.
      // A scale-out worker's shard plays the indices its spec lists.
      ...(spec.shard || spec.episodeIndices ? { episodeIndices: episodeIndicesOf(spec) } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onEpisodeStart ? { onEpisodeStart: opts.onEpisodeStart } : {}),
      onEpisode: (record, s) => {
        opts.onEpisode?.(record, s);
        emit(s);
      },
      ...(opts.onStep ? { onStep: opts.onStep } : {}),
    });
    opts.bindSharedHostMover?.((nodeset, url) => {
      if (!sharedUrls[nodeset]) return;
      sharedUrls[nodeset] = url;
      registry?.attachUrl(nodeset, url);
      runner.moveSharedHost(nodeset, url);
      log(`shared nodeset ${nodeset} moved to ${url}`);
    });
    await runner.checkSelection();
    pool.startOthers();
    await runner.execute();
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
    await hosts?.close();
    registry?.close();
  }
  const final = emit(await summary.finish(status, error));
  // Before _DONE, so whoever waits for the run finds its report; a report that cannot be built does not fail the run.
  await writeReport(runDir, final).catch((err: unknown) => log(`report.json not written: ${errorMessage(err)}`));
  await touchDone(runDir);
  return final;
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

/** The registry entries of the nodesets the graph's nodes call, by name. */
function nodesetsOf(graph: ValidatedGraph, registry: NodesetRegistry): NodesetEntry[] {
  const names = new Set<string>();
  for (const n of graph.nodes.values()) if (n.resolved) names.add(n.resolved.nodeset);
  return [...names].sort().map((name) => registry.get(name));
}

/** The replicated nodeset whose panel picks episodes (the first by name when several have one). */
function envPanelOf(replicated: readonly NodesetEntry[]): EnvPanelTarget | undefined {
  const env = replicated.find((e) => e.manifest.panel);
  return env?.manifest.panel ? { nodeset: env.name, panel: env.manifest.panel } : undefined;
}
