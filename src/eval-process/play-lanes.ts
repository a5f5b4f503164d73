/**
 * Play lanes: a run whose hosts all run on the eval process's own thread (a cheap env and an
 * in-process model, as cart-pole) is one thread's work however many workers it has. Such a run
 * is split over lanes, one per core: lane 0 is the eval process's thread, each other lane a
 * worker thread with hosts of its own (play-lane-main.ts). Every lane's workers take from the
 * run's one cursor (a SharedArrayBuffer), so dispatch stays dynamic; each lane writes its
 * episodes' folders and the main thread folds every record into the summary in index order.
 * Results cannot change: an episode's seed comes from its index, in-process hosts keep their
 * state per episode, and batched hosts are batch-invariant (docs/throughput.md).
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { heldModelKeys } from '../core/model-keys.js';
import { CodedError, type ErrorCode } from '../errors.js';
import type { GraphSpec } from '../core/types.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import { PLAY_LANE_MAIN } from '../paths.js';
import { hostSecretFor, hostSecretsOf } from '../host/host-secret.js';
import type { EpisodeRecord, RunSpec, SharedUrls } from '../store/types.js';
import { perCallTimeoutSecOf } from '../spec/run-spec.js';
import { EpisodeCursor } from './episode-cursor.js';
import { hostMode } from './in-process-host.js';
import { recordLostEpisode, type LostEpisode } from './lost-episode.js';
import { LANE_DROPPED, LANE_IDLE, type LaneMessage, type LaneRequest, type PlayLaneData } from './play-lane-protocol.js';

/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The most lanes a run may use (a positive integer); `1` keeps every run on the eval process's thread. */
export const PLAY_LANES_ENV = 'EVAL_PLAY_LANES';

export interface LaneCountInput {
  /** The nodesets the run's graph uses, as placed for this run. */
  used: readonly NodesetEntry[];
  lent: SharedUrls;
  /** The hosts' environment (EVAL_IN_PROCESS_HOSTS may be set there). */
  env: Record<string, string> | undefined;
  workers: number;
  cores: number;
  /** Per-step listeners stay with the eval process's thread: such a run (an interactive play) uses one lane. */
  stepEvents: boolean;
}

/**
 * How many lanes a run plays in: one per core up to its worker count where every host the run
 * starts itself is served on the eval process's thread (none in a thread or process of its own:
 * those already spread over the cores; hosts the server lends are reached by URL from any lane), else 1.
 */
export function playLaneCount(o: LaneCountInput): number {
  if (o.workers < 2 || o.cores < 2 || o.stepEvents || o.used.length === 0) return 1;
  if (o.used.some((e) => o.lent[e.name] === undefined && hostMode(e, o.env) !== 'inline')) return 1;
  const setting = (o.env?.[PLAY_LANES_ENV] ?? process.env[PLAY_LANES_ENV] ?? '').trim();
  const most = /^[1-9]\d*$/.test(setting) ? Number(setting) : Number.POSITIVE_INFINITY;
  return Math.max(1, Math.min(o.workers, Math.floor(o.cores), most));
}

/** Workers per lane, as even as they go, lane 0 first (it holds worker 0, on whose env the run's selection is checked). */
export function splitWorkers(workers: number, lanes: number): number[] {
  return Array.from({ length: lanes }, (_, k) => Math.floor(((k + 1) * workers) / lanes) - Math.floor((k * workers) / lanes));
}

export interface PlayLanesOptions {
  runDir: string;
  spec: RunSpec;
  graph: GraphSpec;
  /** Workers per lane (splitWorkers); lane 0 is the caller's own and is not started here. */
  counts: readonly number[];
  /** Episodes in flight across the run. @default one per worker */
  maxInFlight?: number;
  /** The run's cursor position (the order comes with go()). */
  cursor: SharedArrayBuffer;
  cores: number;
  /** Shared nodesets the server lends the run: name → URL. */
  lent: SharedUrls;
  /** With tracing on, the run span the lanes' episode spans go under. */
  traceparent?: string;
  env?: Record<string, string>;
  /** The run's nodesets as this process scanned them (NodesetRegistry.list()). */
  nodesets: NodesetEntry[];
  /** Folds a lane's finished episode into the run's summary; the lanes' records arrive one at a time, in the order they finished. */
  addEpisode(record: EpisodeRecord): Promise<void>;
  retireWorker(workerId: number, reason: string): void;
  onEpisodeStart?(info: { index: number; workerId: number }): void;
  onEpisodeWritten?(record: EpisodeRecord): void;
  /** Each lane's record as soon as it is built, before its files are written. */
  onRecord?(record: EpisodeRecord): void;
  log(line: string): void;
  /** A lane failed (its error): the caller stops the run. */
  onFailure(err: Error): void;
  /** Every lane waits for start() once it is up (RunBatchOptions.lanesTogether). @default false */
  together?: boolean;
  /**
   * A lane whose thread's event loop has not turned for this long (a call on it that never
   * returns: an env on the lane's own thread cannot be interrupted from there) is ended, its
   * episodes in flight end TIMEOUT, and it starts again. @default the run's per-call limit
   */
  stallMs?: number;
}

export interface PlayLanes {
  /** A lent shared host was restarted at `url`: every lane calls it there from now on. */
  move(nodeset: string, url: string): void;
  /** Lets the lanes play, in the run's hand-out order (lanes boot before it is planned). */
  go(order: number | readonly number[]): void;
  /**
   * Ends the lanes that have not started playing (still booting, or not yet told to go): called
   * once the work has run out, so a short run does not wait for lanes it no longer needs.
   */
  dropIdle(): void;
  /** With `together`: settles once every lane is up and waiting (or has ended); then start() lets them all play. */
  readonly allClaimed: Promise<void>;
  start(): void;
  /** Tells every lane to stop dispatch, with the run's stop reason. Idempotent per lane. */
  stop(reason: unknown): void;
  /** Settles once every lane has ended and its records are folded in. */
  readonly done: Promise<void>;
}

/** Starts lanes 1 … counts.length-1 in worker threads. */
export function startPlayLanes(o: PlayLanesOptions): PlayLanes {
  const claims = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * o.counts.length));
  const beats = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * o.counts.length));
  const stallMs = o.stallMs ?? Math.min(MAX_TIMER_MS, Math.round(perCallTimeoutSecOf(o.spec, o.graph.per_step_timeout_sec) * 1000));
  let folding: Promise<void> = Promise.resolve();
  const fold = (record: EpisodeRecord): void => {
    folding = folding.then(() => o.addEpisode(record)).catch((err: unknown) => fail(err instanceof Error ? err : new Error(String(err))));
  };
  const fail = (err: Error): void => o.onFailure(err);
  /** Lent hosts as they are now (a restarted lane starts with the moves so far). */
  const lent: SharedUrls = { ...o.lent };
  let order: number | readonly number[] | undefined;
  let stopRequest: LaneRequest | undefined;
  /** Indices folded in from any lane, so a record that arrives after its lane was ended is not folded twice. */
  const folded = new Set<number>();
  const lanes: Lane[] = [];
  let first = o.counts[0]!;
  for (let lane = 1; lane < o.counts.length; lane++) {
    let finish!: () => void;
    let claimed!: () => void;
    const state: Lane = {
      lane,
      firstWorkerId: first,
      workerCount: o.counts[lane]!,
      worker: null,
      ended: false,
      stopped: false,
      killed: null,
      beating: false,
      beat: 0,
      beatAtMs: performance.now(),
      inFlight: new Map(),
      retired: new Set(),
      restarts: 0,
      finish: () => finish(),
      claimed: () => claimed(),
      done: new Promise<void>((resolve) => (finish = resolve)),
      claimedOrEnded: new Promise<void>((resolve) => (claimed = resolve)),
    };
    first += state.workerCount;
    lanes.push(state);
  }

  const launch = (state: Lane, resumeOrder?: number | readonly number[]): void => {
    const { lane } = state;
    const data: PlayLaneData = {
      runDir: o.runDir,
      spec: o.spec,
      graph: o.graph,
      firstWorkerId: state.firstWorkerId,
      workerCount: state.workerCount,
      runWorkerCount: o.counts.reduce((s, n) => s + n, 0),
      maxInFlight: o.maxInFlight ?? o.counts.reduce((s, n) => s + n, 0),
      cursor: o.cursor,
      claims: claims.buffer as SharedArrayBuffer,
      beats: beats.buffer as SharedArrayBuffer,
      lane,
      cores: o.cores,
      lent: { ...lent },
      secrets: hostSecretsOf(Object.values(lent)),
      modelKeys: heldModelKeys(),
      ...(o.traceparent ? { traceparent: o.traceparent } : {}),
      ...(o.env ? { env: o.env } : {}),
      nodesets: o.nodesets,
      together: o.together === true,
      reportWritten: o.onEpisodeWritten !== undefined,
      ...(o.onRecord ? { reportPlayed: true } : {}),
      ...(resumeOrder !== undefined ? { resumeOrder } : {}),
    };
    const worker = new Worker(PLAY_LANE_MAIN, { workerData: data, name: `play lane ${lane}` });
    state.worker = worker;
    state.ended = false;
    state.stopped = false;
    state.killed = null;
    state.beating = false;
    state.beat = Atomics.load(beats, lane);
    state.beatAtMs = performance.now();
    if (stopRequest) stopLane(state, stopRequest);
    const end = (err?: Error): void => {
      state.claimed();
      if (state.ended || state.worker !== worker) return;
      state.ended = true;
      if (err) fail(err);
      // Everything the lane posted has arrived: its thread is no longer needed, whatever it left running.
      void worker.terminate();
    };
    worker.on('message', (m: LaneMessage) => {
      if (state.worker !== worker) return;
      switch (m.type) {
        case 'start':
          state.inFlight.set(m.index, { index: m.index, workerId: m.workerId, startedAt: new Date() });
          o.onEpisodeStart?.({ index: m.index, workerId: m.workerId });
          break;
        case 'written':
          o.onEpisodeWritten?.(m.record);
          break;
        case 'played':
          o.onRecord?.(m.record);
          break;
        case 'episode':
          state.inFlight.delete(m.record.index);
          if (folded.has(m.record.index)) break;
          folded.add(m.record.index);
          fold(m.record);
          break;
        case 'retire':
          state.retired.add(m.workerId);
          o.retireWorker(m.workerId, m.reason);
          break;
        case 'log':
          o.log(m.line);
          break;
        case 'claimed':
          state.claimed();
          break;
        case 'done':
          end();
          break;
        case 'failed':
          end(
            m.stopped ? undefined : m.code ? new CodedError(m.code as ErrorCode, m.message) : new Error(`play lane ${lane}: ${m.message}`),
          );
          break;
      }
    });
    worker.on('error', (err) => end(new Error(`play lane ${lane} failed: ${err.message}`)));
    worker.on('exit', (code) => {
      if (state.worker !== worker) return;
      if (state.killed !== null && !state.ended) {
        const why = state.killed;
        void recover(state, why).catch((err: unknown) => {
          state.ended = true;
          fail(err instanceof Error ? err : new Error(String(err)));
          state.finish();
        });
        return;
      }
      end(new Error(`play lane ${lane} ended before its work was done (exit code ${code})`));
      // The lane is over once its thread is.
      state.finish();
    });
  };

  /**
   * A lane whose thread was ended: each episode it had in flight gets its record (the one it
   * wrote, else TIMEOUT), and the lane starts again with fresh hosts while work is left. A lane
   * held while it had no episode in flight (its hosts' start) fails the run: starting it again
   * would hold it again with nothing to show for it.
   */
  const recover = async (state: Lane, why: string): Promise<void> => {
    await folding;
    const lost = [...state.inFlight.values()].filter((e) => !folded.has(e.index)).sort((a, b) => a.index - b.index);
    state.inFlight.clear();
    for (const e of lost) {
      folded.add(e.index);
      const record = await recordLostEpisode(o.runDir, o.spec, e, why);
      o.onEpisodeWritten?.(record);
      fold(record);
    }
    await folding;
    const cursor = order === undefined ? undefined : new EpisodeCursor(order, o.cursor);
    if (stopRequest || cursor === undefined || cursor.remaining === 0) {
      state.ended = true;
      state.finish();
      return;
    }
    if (lost.length === 0) {
      state.ended = true;
      fail(new Error(`play lane ${state.lane} ${why}, with no episode in flight; the run cannot go on without it`));
      state.finish();
      return;
    }
    state.restarts += 1;
    // Its workers stand again, those that had retired too: the new thread starts every host afresh.
    cursor.rejoin(state.retired.size);
    state.retired.clear();
    o.log(`play lane ${state.lane} started again (restart ${state.restarts}); ${lost.length} episode(s) it held ended`);
    launch(state, order!);
  };

  const stopLane = (state: Lane, message: LaneRequest): void => {
    if (state.stopped || state.worker === null) return;
    state.stopped = true;
    state.worker.postMessage(message);
  };

  // The lanes' threads turn their beat counts; a count that stands still past the per-call limit means a call holds the thread.
  const watch = setInterval(
    () => {
      const now = performance.now();
      for (const state of lanes) {
        if (state.ended || state.killed !== null || state.worker === null) continue;
        const beat = Atomics.load(beats, state.lane);
        if (beat !== state.beat) {
          state.beat = beat;
          state.beatAtMs = now;
          state.beating = true;
          continue;
        }
        // A thread still loading its own code has not beaten yet: only a lane that did is judged.
        if (!state.beating) continue;
        const heldMs = now - state.beatAtMs;
        if (heldMs <= stallMs) continue;
        state.killed = `play lane ${state.lane}'s thread was held ${Math.round(heldMs)} ms, past the per-call limit of ${stallMs} ms (a call that never returned); the thread was ended`;
        o.log(state.killed);
        void state.worker.terminate();
      }
    },
    Math.max(25, Math.min(1000, Math.floor(stallMs / 4))),
  );
  watch.unref();

  for (const state of lanes) launch(state);
  const done = Promise.all(lanes.map((l) => l.done))
    .then(() => folding)
    .finally(() => clearInterval(watch));
  return {
    dropIdle() {
      for (const state of lanes) {
        if (Atomics.compareExchange(claims, state.lane, LANE_IDLE, LANE_DROPPED) !== LANE_IDLE) continue;
        // Ended without a failure; its exit settles it.
        state.ended = true;
        state.claimed();
        void state.worker?.terminate();
      }
    },
    move(nodeset, url) {
      lent[nodeset] = url;
      const secret = hostSecretFor(url);
      const m: LaneRequest = { type: 'moved', nodeset, url, ...(secret !== undefined ? { secret } : {}) };
      for (const state of lanes) state.worker?.postMessage(m);
    },
    allClaimed: Promise.all(lanes.map((l) => l.claimedOrEnded)).then(() => {}),
    start() {
      for (const state of lanes) state.worker?.postMessage({ type: 'start' } satisfies LaneRequest);
    },
    go(o) {
      order = o;
      for (const state of lanes) if (!state.stopped) state.worker?.postMessage({ type: 'go', order: o } satisfies LaneRequest);
    },
    stop(reason: unknown) {
      stopRequest ??= {
        type: 'stop',
        code: reason instanceof CodedError ? reason.code : null,
        message: reason instanceof Error ? reason.message : String(reason),
      };
      for (const state of lanes) stopLane(state, stopRequest);
    },
    done,
  };
}

/** One lane as the main thread sees it, across the threads it may be started in. */
interface Lane {
  readonly lane: number;
  readonly firstWorkerId: number;
  readonly workerCount: number;
  /** Its current thread. */
  worker: Worker | null;
  /** Its current thread has ended (done, failed, dropped) and will not be started again. */
  ended: boolean;
  /** Its current thread was told to stop. */
  stopped: boolean;
  /** Why the main thread ended its current thread (held past the limit); null otherwise. */
  killed: string | null;
  /** Its current thread has counted a beat. */
  beating: boolean;
  /** Its beat count when last seen to move, and when. */
  beat: number;
  beatAtMs: number;
  /** Episodes started on it whose record has not arrived. */
  inFlight: Map<number, LostEpisode>;
  /** Its workers that retired (their hosts would not start). */
  retired: Set<number>;
  restarts: number;
  finish(): void;
  claimed(): void;
  /** Settles once the lane has ended for good. */
  done: Promise<void>;
  /** Settles when it claimed itself (together) or ended. */
  claimedOrEnded: Promise<void>;
}
