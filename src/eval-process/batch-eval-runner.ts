/**
 * BatchEvalRunner: runs a run's episodes over the worker pool. Each worker, pinned to its own
 * slot, plays its share of the run's episodes in flight (one, or many where every node awaits
 * I/O: run-concurrency.ts), each taking the next episode index from a shared cursor when it is
 * free, with no step barrier between them. Each episode: env panel cascade + play + load, step
 * budget resolution, a fresh LoopRunner under a wall-clock limit, a full record whatever the
 * ending, eviction of its keyed state, then the record is appended and the aggregates
 * recomputed under the summary lock.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { BadInputError, CodedError, errorMessage, HostDiedError, HostError } from '../errors.js';
import type { ValidatedGraph } from '../graph/graph.js';
import { HostClient } from '../host/host-client.js';
import { LoopRunner, type LoopRunOptions } from '../graph/loop-runner.js';
import type { ExecutorResult, PanelLoadResult, PanelSpec, PanelValues } from '../core/types.js';
import { checkPanelSelection, panelValues } from '../nodeset-registry/panel-selection.js';
import type { EpisodeRecord, RunSpec, RunSummary } from '../store/types.js';
import { outcomeOfException, outcomeOfResult, type AbortCause, type EpisodeOutcome } from './episode-outcome.js';
import { assetWritesBehind, EpisodeWriter } from './episode-writer.js';
import type { EnvWorkerPool, WorkerSlot } from './env-worker-pool.js';
import type { EpisodeCursor } from './episode-cursor.js';
import { dispatchOrder } from './dispatch-order.js';
import { seededOrder } from './seeded-order.js';
import { resolveStepBudget } from './step-budget.js';
import { perCallTimeoutSecOf, perStepTimeoutSecOf } from '../spec/run-spec.js';
import { effectiveWorkerCount } from '../spec/effective-workers.js';
import { episodesOfWorker, type RunConcurrency } from '../spec/run-concurrency.js';
import { ReportedModelTally, type ReportedModel } from '../store/reported-models.js';
import { playCountOf, playOf, playSeed, repeatsOf } from '../spec/repeats.js';
import type { RunSpan } from '../tracing/spans.js';
import { eventHook, firingHook, withStepHook } from './episode-trace-hooks.js';

/** setTimeout's longest delay; a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const EVICT_TIMEOUT_MS = 2000;
/** Runs with more plays than this keep index order: ~0.2 ms to price a gridnav episode, and a long run's tail is a small part of it. */
const MAX_PRICED_PLAYS = 1024;
/** Pricing the episodes never holds a run's start longer than this. */
const PRICE_TIMEOUT_MS = 2000;
/** Episodes one episode slot of a worker may have played and not yet written before it waits for their writes (memory stays flat when the disk falls behind). */
export const WRITES_BEHIND = 2;
/** Loading an episode (panel cascade, play, load) that takes longer than this ends it TIMEOUT. */
export const LOAD_TIMEOUT_MS = 60_000;
/** After a TIMEOUT, a host that does not answer /health within this is replaced. */
const HEALTH_TIMEOUT_MS = 2000;

/** The env nodeset whose panel picks each episode. */
export interface EnvPanelTarget {
  nodeset: string;
  panel: PanelSpec;
  /** A shared env: one host for every worker, each load carrying its selection. */
  shared?: boolean;
}

export type StepEvent = Parameters<NonNullable<LoopRunOptions['onStep']>>[0];
/** Per-iteration progress, with the episode and worker it belongs to. */
export type StepListener = (event: StepEvent, episode: { index: number; workerId: number }) => void;

/** Where finished episodes go: the run's SummaryWriter, or in a play lane the main thread's (null: no summary here). */
export interface EpisodeSink {
  addEpisode(record: EpisodeRecord): Promise<RunSummary | null>;
  retireWorker(workerId: number, reason: string): void;
}

export interface BatchEvalRunnerOptions {
  spec: RunSpec;
  runDir: string;
  graph: ValidatedGraph;
  pool: EnvWorkerPool;
  summary: EpisodeSink;
  /**
   * All the run's workers, where some play in other lanes (play-lanes.ts) and the pool holds
   * only this lane's: the hand-out order is planned for all of them. @default the pool's
   */
  runWorkerCount?: number;
  /**
   * Episodes in flight across the run (run-concurrency.ts): worker k plays episodesOfWorker(k)
   * of them at once. @default one per worker
   */
  concurrency?: Pick<RunConcurrency, 'workers' | 'maxInFlight'>;
  /** The env panel to drive; without one each episode gets `<graph>/<index>` as its id. */
  envPanel?: EnvPanelTarget;
  /** URLs of the shared hosts the graph calls (evicted after each episode, callers released at the end). */
  sharedUrls?: Record<string, string>;
  /**
   * Shared nodesets whose host the server lends: one that dies is restarted by the server and
   * its new URL arrives through moveSharedHost, so after a CRASHED episode a worker waits (up
   * to `lentRecoveryMs`) for every one of them to answer again before its next episode, instead
   * of crashing the rest of the run against a host that is coming back.
   */
  lentNodesets?: readonly string[];
  /** @default 15000 */
  lentRecoveryMs?: number;
  /** Stops dispatch; in-flight episodes end CANCELLED with their partial metrics. */
  signal?: AbortSignal;
  onEpisodeStart?(info: { index: number; workerId: number }): void;
  onEpisode?(record: EpisodeRecord, summary: RunSummary): void;
  /** An episode's record as soon as it is built, before its files are written (a stopWhen run decides on it). */
  onRecord?(record: EpisodeRecord): void;
  /** When an episode's folder is complete on disk, before the summary includes it. */
  onEpisodeWritten?(record: EpisodeRecord): void;
  /** Per-node progress; off in batch runs unless asked for. */
  onStep?: StepListener;
  /** The run indices to play (a partial run's shards); default all of 0..episodeCount-1. */
  episodeIndices?: readonly number[];
  /** The run's span when tracing is on: each episode gets a span under it, with one per step. */
  trace?: RunSpan;
  /** A line for the run's log (a worker retired); default: none. */
  log?(message: string): void;
}

/** One worker's state shared by its episodes in flight. */
interface WorkerLane {
  slot: WorkerSlot;
  /** Every episode slot's chain of writes (each slot writes its episodes in order), and the first write that failed. */
  written: { tails: Set<Promise<void>>; failed: boolean; error: unknown };
  /** The health check under way, which every episode of the worker waits on. */
  checking: Promise<boolean> | undefined;
  /** The worker retired (its hosts could not be brought up): its episodes take no more. */
  retired: boolean;
}

/** How long a worker waits for a lent shared host that died to be back (the server restarts one in about a second). */
const LENT_RECOVERY_MS = 15_000;

export class BatchEvalRunner {
  readonly #o: BatchEvalRunnerOptions;
  readonly #sharedClients: Map<string, HostClient>;
  /** Stops the other workers when one hits an error the run cannot survive (a disk write failing). */
  readonly #fatal = new AbortController();
  /** The run's cancel and a worker's fatal error in one signal, made once: AbortSignal.any costs a few tens of µs per episode. */
  readonly #cancelSignal: AbortSignal;
  /** Shared hosts whose /stats said they have no batcher: releasing a caller there does nothing, so it is not sent. */
  readonly #noBatcher = new WeakSet<HostClient>();
  /** Set by planDispatch(); index order when it was not called. */
  #order: number | readonly number[] | undefined;
  /** The panel values each env host last answered with (a respawned host has a new client, so starts unknown). */
  readonly #panelValues = new WeakMap<HostClient, PanelValues>();

  constructor(options: BatchEvalRunnerOptions) {
    this.#o = options;
    this.#cancelSignal = options.signal ? AbortSignal.any([options.signal, this.#fatal.signal]) : this.#fatal.signal;
    // Every episode in flight listens on it: one listener per episode, not a leak.
    setMaxListeners(0, this.#cancelSignal);
    this.#sharedClients = new Map(Object.entries(options.sharedUrls ?? {}).map(([name, url]) => [name, new HostClient(url)]));
  }

  /** Points eviction and caller release for a shared nodeset at its new host (it was restarted elsewhere). */
  moveSharedHost(nodeset: string, url: string): void {
    this.#sharedClients.get(nodeset)?.close();
    this.#sharedClients.set(nodeset, new HostClient(url));
  }

  /**
   * Checks the run's episode selection against the env panel of worker 0 before any episode
   * starts: a dataset, split or episode range the env does not offer is bad input for the
   * whole run, not an ERROR in every episode.
   */
  async checkSelection(): Promise<void> {
    const target = this.#o.envPanel;
    const client = this.#panelClient();
    if (!target || !client) return;
    const signal = this.#o.signal;
    let state = await client.panel(signal);
    await checkPanelSelection(target.nodeset, target.panel, this.#o.spec, {
      options: async (field) => state.options[field] ?? [],
      choose: async (field, value) => {
        state = await client.panelField(field, value, signal);
      },
    });
  }

  /** The plays in index order: the shard's indices, or all of 0 … plays-1. */
  #plays(): number | readonly number[] {
    return this.#o.episodeIndices ?? playCountOf(this.#o.spec);
  }

  /**
   * Settles the order execute() hands the plays out in: with stopWhen, a permutation seeded by the
   * run seed (seeded-order.ts); else balanced on the env's prices where it prices them, more than
   * one worker plays more plays than workers, and there are at most MAX_PRICED_PLAYS; index order
   * otherwise.
   */
  async planDispatch(): Promise<void> {
    const plays = this.#plays();
    // A run that may stop early stops on a prefix of this order: a seeded sample of the plan, whatever the prices or workers.
    if (this.#o.spec.stopWhen) {
      this.#order = seededOrder(plays, this.#o.spec.seed);
      return;
    }
    const count = typeof plays === 'number' ? plays : plays.length;
    const workers = Math.min(this.#o.runWorkerCount ?? this.#o.pool.workerCount, effectiveWorkerCount(this.#o.spec), count);
    this.#order = workers > 1 && count > workers && count <= MAX_PRICED_PLAYS ? await this.#pricedOrder(plays, workers) : plays;
  }

  /** The plays in the order they are handed out: planDispatch()'s, else index order. */
  get order(): number | readonly number[] {
    return this.#order ?? this.#plays();
  }

  /**
   * Runs every episode; resolves when the cursor is drained and every worker is idle (or stopped
   * on cancel). `cursor`: the run's, over `order`, shared with other lanes' workers.
   */
  async execute(cursor: EpisodeCursor): Promise<void> {
    const { spec, pool } = this.#o;
    const workers = Math.max(1, Math.min(pool.workerCount, effectiveWorkerCount(spec), cursor.count));
    await this.#findHostsWithoutBatcher();
    try {
      // Settled, not raced: a worker that fails stops the others, but each one's in-flight episode still gets its record before the run ends.
      const results = await Promise.allSettled(Array.from({ length: workers }, (_, k) => this.#work(pool.firstWorkerId + k, cursor)));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      for (const c of this.#sharedClients.values()) c.close();
    }
  }

  /** The env host whose panel the run's selection is checked on: the shared one, or worker 0's. */
  #panelClient(): HostClient | undefined {
    const target = this.#o.envPanel;
    if (!target) return undefined;
    if (target.shared) return this.#sharedClients.get(target.nodeset);
    const client = this.#o.pool.lease(0).clients.get(target.nodeset);
    this.#o.pool.release(0);
    return client;
  }

  /**
   * The plays in the order to hand them out when the env panel prices them: dispatchOrder's
   * (the costliest first, then swaps that end the priced hand-out earlier; unpriced ones go last,
   * in index order), so a long episode does not start when most of the work is done and hold up
   * the end. Only the order changes: a play's seed and its place in the records come from its
   * index. Anything the env cannot answer keeps index order.
   */
  async #pricedOrder(plays: number | readonly number[], workers: number): Promise<number | readonly number[]> {
    const target = this.#o.envPanel;
    const client = this.#panelClient();
    if (!target || !client) return plays;
    const indices = typeof plays === 'number' ? Array.from({ length: plays }, (_, i) => i) : plays;
    const { spec } = this.#o;
    const episodes = [...new Set(indices.map((r) => spec.episodeOffset + playOf(spec, r).episode))];
    let costs: Array<number | null> | null;
    try {
      const signal = AbortSignal.any([this.#cancelSignal, AbortSignal.timeout(PRICE_TIMEOUT_MS)]);
      costs = await client.panelCosts(
        episodes.map((e) => Object.fromEntries(panelValues(target.panel, spec, e))),
        signal,
      );
    } catch {
      return plays;
    }
    if (!costs) return plays;
    const costOf = new Map(episodes.map((e, k) => [e, costs[k] ?? null]));
    const priced: number[] = [];
    const prices: number[] = [];
    const unpriced: number[] = [];
    for (const r of indices) {
      const cost = costOf.get(spec.episodeOffset + playOf(spec, r).episode);
      if (typeof cost === 'number' && Number.isFinite(cost) && cost >= 0) {
        priced.push(r);
        prices.push(cost);
      } else unpriced.push(r);
    }
    return [...dispatchOrder(prices, workers).map((at) => priced[at]!), ...unpriced];
  }

  async #work(workerId: number, cursor: EpisodeCursor): Promise<void> {
    if (cursor.remaining === 0) {
      cursor.leave();
      return;
    }
    const { pool, spec } = this.#o;
    const slot = pool.lease(workerId);
    const episodes = this.#o.concurrency ? episodesOfWorker(this.#o.concurrency, workerId) : 1;
    const lane: WorkerLane = {
      slot,
      written: { tails: new Set(), failed: false, error: undefined },
      checking: undefined,
      retired: false,
    };
    // The first keeps the worker's own caller id: a run of one episode per worker calls the batchers as before.
    const callers = Array.from({ length: episodes }, (_, j) =>
      j === 0 ? `${spec.runId}/w${workerId}` : `${spec.runId}/w${workerId}.${j}`,
    );
    try {
      if (!(await this.#orRetire(workerId, cursor, 'could not start', () => pool.ready(workerId)))) {
        lane.retired = true;
        return;
      }
      const results = await Promise.allSettled(
        callers.map((callerId) =>
          this.#play(lane, cursor, callerId).catch((err: unknown) => {
            // The worker's other episodes, and the other workers, stop now rather than when this worker's last episode ends.
            if (!this.#stopped()) this.#fatal.abort(err);
            throw err;
          }),
        ),
      );
      await Promise.all(lane.written.tails);
      if (lane.written.failed) throw lane.written.error;
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } catch (err) {
      if (!this.#stopped()) this.#fatal.abort(err);
      throw err;
    } finally {
      // Every record this worker played is on disk (or has failed) before the worker counts as done.
      await Promise.all(lane.written.tails);
      if (!lane.retired) cursor.leave();
      pool.release(workerId);
      await Promise.all(callers.map((c) => this.#releaseCaller(c)));
    }
  }

  /**
   * One of a worker's episodes in flight: takes the next index, plays it, and again, until the
   * cursor is drained, the run stops or the worker retires. A worker whose hosts are replicated
   * plays one at a time (run-concurrency.ts), so replacing its hosts never cuts another episode short.
   */
  async #play(lane: WorkerLane, cursor: EpisodeCursor, callerId: string): Promise<void> {
    const { pool } = this.#o;
    const { slot, written } = lane;
    const workerId = slot.workerId;
    // The episodes of this slot are written in order, one chain per slot: a worker with many
    // episodes in flight writes their folders side by side, not each behind all the others.
    let tail: Promise<void> = Promise.resolve();
    let pending = 0;
    written.tails.add(tail);
    try {
      for (;;) {
        if (written.failed) throw written.error;
        if (lane.retired || this.#stopped() || cursor.remaining === 0) break;
        if (!(await this.#healthy(lane, cursor))) break;
        if (this.#stopped()) break;
        // Taken only once the slot is healthy, so a respawn never holds an episode another worker could run.
        const index = cursor.take();
        if (index === null) break;
        const { record, finish } = await this.#runEpisode(slot, index, callerId);
        this.#o.onRecord?.(record);
        // The episode's files and summary entry are written while the next episode plays (in order,
        // one behind): with many workers finishing at once, the next model call or step goes out
        // first instead of queueing behind every other worker's writes.
        pending += 1;
        written.tails.delete(tail);
        tail = tail
          .then(finish)
          .catch((err: unknown) => {
            written.failed = true;
            written.error = err;
            if (!this.#stopped()) this.#fatal.abort(err);
          })
          .finally(() => {
            pending -= 1;
          });
        written.tails.add(tail);
        // A disk slower than the play (a loaded machine) must not queue episodes without end: each holds its log until written.
        if (pending > WRITES_BEHIND) await tail;
        if (record.status === 'CRASHED' || (record.status === 'TIMEOUT' && !(await answers(slot)))) pool.markSuspect(workerId);
        if (record.status === 'CRASHED') await this.#lentHostsBack();
      }
    } finally {
      await tail;
    }
  }

  /** The worker's hosts, replaced where dead or suspect; one check at a time per worker, so a worker retires once. False: it retired. */
  async #healthy(lane: WorkerLane, cursor: EpisodeCursor): Promise<boolean> {
    const { pool } = this.#o;
    const workerId = lane.slot.workerId;
    lane.checking ??= this.#orRetire(workerId, cursor, 'could not be started again', () =>
      pool.ensureHealthy(workerId, this.#o.signal),
    ).then((up) => {
      if (!up) lane.retired = true;
      return up;
    });
    const checking = lane.checking;
    try {
      return await checking;
    } finally {
      if (lane.checking === checking) lane.checking = undefined;
    }
  }

  /**
   * Runs `hostsUp` (the worker's first start, or the replacement of its dead or suspect hosts).
   * When it fails, the worker retires and the others play its share (an episode's result does
   * not depend on its worker); only the last worker standing in any lane fails the run with the
   * error, and only while episodes are left to hand out.
   */
  async #orRetire(workerId: number, cursor: EpisodeCursor, what: string, hostsUp: () => Promise<void>): Promise<boolean> {
    try {
      await hostsUp();
      return true;
    } catch (err) {
      // Counted out atomically, so two workers failing at once cannot both retire the last.
      if (this.#stopped() || !cursor.retire()) throw err;
      const reason = `its env host ${what} (${errorMessage(err).replace(/\s+/g, ' ')})`;
      this.#o.summary.retireWorker(workerId, reason);
      this.#o.log?.(`worker ${workerId} retired: ${reason}; the other workers play its episodes`);
      return false;
    }
  }

  /** Waits until every lent shared host answers /health (a restarted one under its new URL), the run stops, or lentRecoveryMs passes. */
  async #lentHostsBack(): Promise<void> {
    const names = this.#o.lentNodesets ?? [];
    if (names.length === 0) return;
    const until = performance.now() + (this.#o.lentRecoveryMs ?? LENT_RECOVERY_MS);
    for (;;) {
      const health = await Promise.allSettled(
        names.map((n) => this.#sharedClients.get(n)?.health(AbortSignal.timeout(EVICT_TIMEOUT_MS)) ?? Promise.reject(new Error(n))),
      );
      if (health.every((h) => h.status === 'fulfilled') || this.#stopped() || performance.now() >= until) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Tells the shared batchers not to wait for this caller until it calls again. */
  async #releaseCaller(callerId: string): Promise<void> {
    const batchers = [...this.#sharedClients.values()].filter((c) => !this.#noBatcher.has(c));
    if (batchers.length === 0) return;
    const signal = AbortSignal.timeout(EVICT_TIMEOUT_MS);
    await Promise.allSettled(batchers.map((c) => c.releaseCaller(callerId, signal)));
  }

  /** Asks each shared host once whether it batches; one that does not answer (or a moved host) keeps getting releases. */
  async #findHostsWithoutBatcher(): Promise<void> {
    await Promise.allSettled(
      [...this.#sharedClients.values()].map(async (c) => {
        if ((await c.stats(AbortSignal.timeout(EVICT_TIMEOUT_MS))).batcher === null) this.#noBatcher.add(c);
      }),
    );
  }

  #stopped(): boolean {
    return Boolean(this.#o.signal?.aborted) || this.#fatal.signal.aborted;
  }

  /** Plays one episode; `finish` writes its files, then adds it to the summary (and tells onEpisode). */
  async #runEpisode(slot: WorkerSlot, index: number, callerId: string): Promise<{ record: EpisodeRecord; finish: () => Promise<void> }> {
    const { spec, graph, runDir } = this.#o;
    const startedAt = new Date();
    const t0 = performance.now();
    // With repeats, run index `index` is play k of episode i (spec/repeats.ts); without, i = index and k = 0.
    const play = playOf(spec, index);
    const episodeIndex = spec.episodeOffset + play.episode;
    const seed = playSeed(spec.seed, episodeIndex, play.repeat);
    const episodeKey = `${spec.runId}:${index}`;
    const writer = EpisodeWriter.open(runDir, index);
    this.#o.onEpisodeStart?.({ index, workerId: slot.workerId });
    const span = this.#o.trace?.startEpisode({ index, episodeIndex, seed, workerId: slot.workerId });

    // Whichever abort fires first decides between TIMEOUT and CANCELLED, and gives the reason.
    let cause: AbortCause | undefined;
    const cancel = this.#cancelSignal;
    const episodeAbort = new AbortController();
    const signal = episodeAbort.signal;
    const onCancel = () => {
      cause ??= 'cancel';
      episodeAbort.abort(cancel.reason);
    };
    if (cancel.aborted) onCancel();
    else cancel.addEventListener('abort', onCancel, { once: true });
    let timer: NodeJS.Timeout | undefined;
    let timeoutMs = LOAD_TIMEOUT_MS;
    const arm = (ms: number) => {
      clearTimeout(timer);
      timeoutMs = ms;
      timer = setTimeout(() => {
        cause ??= 'timeout';
        episodeAbort.abort(new CodedError('TIMEOUT', `episode ${index} passed its wall-clock limit of ${ms} ms`));
      }, ms);
    };

    const graphSeconds = graph.spec.per_step_timeout_sec;
    const callTimeoutMs = Math.min(MAX_TIMER_MS, Math.round(perCallTimeoutSecOf(spec, graphSeconds) * 1000));
    /** Set when a single call passed its limit: the episode ends TIMEOUT then, and says which call. */
    let callTimedOut: string | undefined;
    const onCallTimeout = (c: { nodeId: string; step: number; ms: number }): void => {
      if (cause !== undefined) return;
      cause = 'timeout';
      callTimedOut = `node "${c.nodeId}" got no answer within the per-call limit of ${c.ms} ms (step ${c.step})`;
      episodeAbort.abort(new CodedError('TIMEOUT', `episode ${index}: ${callTimedOut}`));
    };

    const reported = new ReportedModelTally();
    let load: PanelLoadResult | undefined;
    let result: ExecutorResult | undefined;
    let outcome: EpisodeOutcome;
    let stepBudget = 0;
    try {
      arm(LOAD_TIMEOUT_MS);
      load = await this.#loadEpisode(slot, episodeIndex, episodeKey, signal);
      stepBudget = resolveStepBudget({ api: spec.stepBudget, env: load?.stepBudget, graph: graph.spec.step_budget }).budget;
      arm(Math.min(MAX_TIMER_MS, Math.round(stepBudget * perStepTimeoutSecOf(spec, graphSeconds) * 1000)));
      const runner = new LoopRunner({ urlOverrides: slot.urlOverrides });
      const onStep = this.#o.onStep;
      span?.loopStarted();
      result = await runner.run(graph, {
        stepBudget,
        context: {
          runSeed: spec.seed,
          episodeIndex,
          seed,
          episodeKey,
          callerId,
          ...(play.repeat > 0 ? { repeat: play.repeat } : {}),
          ...(this.#o.concurrency ? { runInFlight: this.#o.concurrency.maxInFlight } : {}),
        },
        signal,
        callTimeoutMs,
        onCallTimeout,
        onFiring: firingHook((entry) => writer.logFiring(entry), span),
        onEvent: eventHook((event) => {
          reported.add(event);
          writer.logEvent(event);
        }, span),
        onAsset: (asset) => {
          const written = writer.writeAsset(asset);
          // The episode plays on while its asset is written (finish() waits for it before the record goes
          // anywhere): a folder and a file cost 1-13 ms of the thread pool here, most of an episode's last step.
          // A live viewer may fetch the asset as soon as it sees the step, and a disk that falls behind must slow the env down.
          return onStep || assetWritesBehind() ? written : undefined;
        },
        ...withStepHook(onStep ? (event: StepEvent) => onStep(event, { index, workerId: slot.workerId }) : undefined, span),
      });
      outcome = outcomeOfResult(result, cause, timeoutMs);
    } catch (err) {
      outcome = this.#outcomeOfSetupOrThrow(err, cause, timeoutMs);
    } finally {
      clearTimeout(timer);
      cancel.removeEventListener('abort', onCancel);
    }
    if (outcome.status === 'TIMEOUT' && callTimedOut !== undefined) outcome = { status: 'TIMEOUT', error: callTimedOut };

    // The episode's state is dropped while the next one plays (its key is its own); the caller is
    // released at once, so the shared batchers do not hold other workers' calls for this one while it sets up its next episode.
    const evicted = this.#evict(slot, episodeKey);
    await this.#releaseCaller(callerId);
    const finishedAt = new Date();
    const record = buildRecord({
      index,
      episodeId: load?.episodeId ?? `${spec.graphName}/${episodeIndex}`,
      outcome,
      result,
      seed,
      workerId: slot.workerId,
      durationMs: Math.round(performance.now() - t0),
      startedAt,
      finishedAt,
      load,
      stepBudget,
      ...(repeatsOf(spec) > 1 ? { repeat: play.repeat } : {}),
      reportedModels: reported.list(),
    });
    // A traced episode's record links to its trace (fields that, like the timings, differ per run).
    if (span) Object.assign(record, { traceId: span.traceId, spanId: span.spanId });
    span?.end(record);
    const finish = async () => {
      await writer.finish(record);
      this.#o.onEpisodeWritten?.(record);
      const summary = await this.#o.summary.addEpisode(record);
      if (summary) this.#o.onEpisode?.(record, summary);
      await evicted;
    };
    return { record, finish };
  }

  /** Setup failures: a refused budget or a panel that rejects the episode are ERROR; a dead host is CRASHED. */
  #outcomeOfSetupOrThrow(err: unknown, cause: AbortCause | undefined, timeoutMs: number): EpisodeOutcome {
    if (cause === undefined && err instanceof BadInputError) return { status: 'ERROR', error: err.message };
    if (cause === undefined && err instanceof HostError && !(err instanceof HostDiedError)) {
      return { status: 'ERROR', error: `env panel: ${err.message}` };
    }
    return outcomeOfException(err, cause, timeoutMs);
  }

  /** Panel cascade on this worker's env host, then play and load. */
  async #loadEpisode(
    slot: WorkerSlot,
    episodeIndex: number,
    episodeKey: string,
    signal: AbortSignal,
  ): Promise<PanelLoadResult | undefined> {
    const target = this.#o.envPanel;
    if (!target) return undefined;
    if (target.shared) {
      // Every worker drives the one host: the load carries the whole selection and leaves its panel state alone.
      const shared = this.#sharedClients.get(target.nodeset);
      if (!shared) throw new HostDiedError(`no host of ${target.nodeset}`);
      return shared.panelLoad(episodeKey, signal, Object.fromEntries(panelValues(target.panel, this.#o.spec, episodeIndex)));
    }
    const client = slot.clients.get(target.nodeset);
    if (!client) throw new HostDiedError(`worker ${slot.workerId} has no host of ${target.nodeset}`);
    // Only this worker drives its host's panel, so a field that already holds its value (the
    // dataset and split of the previous episode) is not sent again.
    let known = this.#panelValues.get(client);
    this.#panelValues.delete(client);
    for (const [field, value] of panelValues(target.panel, this.#o.spec, episodeIndex)) {
      if (known !== undefined && known[field] !== undefined && String(known[field]) === String(value)) continue;
      known = (await client.panelField(field, value, signal)).values;
    }
    if (target.panel.actions.includes('play')) known = (await client.panelAction('play', signal)).values;
    const loaded = await client.panelLoad(episodeKey, signal);
    if (known) this.#panelValues.set(client, known);
    return loaded;
  }

  /** Drops the episode's keyed state from every host it used; a host that is gone has nothing to drop. */
  async #evict(slot: WorkerSlot, episodeKey: string): Promise<void> {
    const clients = [...slot.clients.values(), ...this.#sharedClients.values()];
    if (clients.length === 0) return;
    // One time limit for all of them: each AbortSignal.timeout is a timer of its own.
    const signal = AbortSignal.timeout(EVICT_TIMEOUT_MS);
    await Promise.allSettled(clients.map((c) => c.evict(episodeKey, signal)));
  }
}

/** Whether every host of the slot answers /health (a hung host is replaced before the next episode). */
async function answers(slot: WorkerSlot): Promise<boolean> {
  const checks = await Promise.allSettled([...slot.clients.values()].map((c) => c.health(AbortSignal.timeout(HEALTH_TIMEOUT_MS))));
  return checks.every((r) => r.status === 'fulfilled');
}

export interface RecordParts {
  index: number;
  episodeId: string;
  outcome: EpisodeOutcome;
  result: ExecutorResult | undefined;
  seed: number;
  workerId: number;
  durationMs: number;
  startedAt: Date;
  finishedAt: Date;
  load: PanelLoadResult | undefined;
  stepBudget: number;
  /** Which play of its episode this is, on a run with repeats > 1. */
  repeat?: number;
  reportedModels: ReportedModel[];
}

/** A record with a fixed key order, so equal episodes serialise to equal bytes. */
export function buildRecord(p: RecordParts): EpisodeRecord {
  const r = p.result;
  const record: EpisodeRecord = {
    index: p.index,
    episodeId: p.episodeId,
    status: p.outcome.status,
    steps: r?.steps ?? 0,
    metrics: r?.metrics ?? {},
    seed: p.seed,
    workerId: p.workerId,
    durationMs: p.durationMs,
    startedAt: p.startedAt.toISOString(),
    finishedAt: p.finishedAt.toISOString(),
    stepBudget: p.stepBudget,
    assets: r?.assets ?? [],
  };
  if (p.load?.task !== undefined) record.task = p.load.task;
  if (p.load?.scene !== undefined) record.scene = p.load.scene;
  if (p.load?.instruction !== undefined) record.instruction = p.load.instruction;
  if (p.load?.sampleId !== undefined) record.sampleId = p.load.sampleId;
  if (p.load?.cluster !== undefined) record.cluster = p.load.cluster;
  if (p.repeat !== undefined) record.repeat = p.repeat;
  if (p.outcome.error !== undefined) record.error = p.outcome.error;
  if (r && r.nodeErrors.length > 0) record.nodeErrors = r.nodeErrors;
  if (r?.droppedMetrics) record.droppedMetrics = r.droppedMetrics;
  if (r?.scores) record.scores = r.scores;
  if (p.reportedModels.length > 0) record.reportedModels = p.reportedModels;
  return orderKeys(record);
}

const RECORD_KEY_ORDER: (keyof EpisodeRecord)[] = [
  'index',
  'episodeId',
  'status',
  'steps',
  'metrics',
  'droppedMetrics',
  'seed',
  'workerId',
  'durationMs',
  'startedAt',
  'finishedAt',
  'task',
  'scene',
  'instruction',
  'sampleId',
  'cluster',
  'repeat',
  'stepBudget',
  'error',
  'nodeErrors',
  'assets',
  'scores',
  'reportedModels',
];

function orderKeys(r: EpisodeRecord): EpisodeRecord {
  const out: Record<string, unknown> = {};
  for (const k of RECORD_KEY_ORDER) if (r[k] !== undefined) out[k] = r[k];
  return out as unknown as EpisodeRecord;
}
