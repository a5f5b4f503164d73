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
import { Worker } from 'node:worker_threads';
import { heldModelKeys } from '../core/model-keys.js';
import { CodedError, type ErrorCode } from '../errors.js';
import type { GraphSpec } from '../core/types.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import { PLAY_LANE_MAIN } from '../paths.js';
import { hostSecretFor, hostSecretsOf } from '../host/host-secret.js';
import type { EpisodeRecord, RunSpec, SharedUrls } from '../store/types.js';
import { hostMode } from './in-process-host.js';
import { LANE_DROPPED, LANE_IDLE, type LaneMessage, type LaneRequest, type PlayLaneData } from './play-lane-protocol.js';

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
  log(line: string): void;
  /** A lane failed (its error): the caller stops the run. */
  onFailure(err: Error): void;
  /** Every lane waits for start() once it is up (RunBatchOptions.lanesTogether). @default false */
  together?: boolean;
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
  const workers: Worker[] = [];
  const claims = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * o.counts.length));
  /** Per lane (index lane - 1): ends it without a failure (it was dropped). */
  const drops: Array<() => void> = [];
  let folding: Promise<void> = Promise.resolve();
  const fail = (err: Error): void => o.onFailure(err);
  const ends: Promise<void>[] = [];
  /** Per lane: settles when it claimed itself (together) or ended. */
  const claimedOrEnded: Promise<void>[] = [];
  let first = o.counts[0]!;
  for (let lane = 1; lane < o.counts.length; lane++) {
    const data: PlayLaneData = {
      runDir: o.runDir,
      spec: o.spec,
      graph: o.graph,
      firstWorkerId: first,
      workerCount: o.counts[lane]!,
      runWorkerCount: o.counts.reduce((s, n) => s + n, 0),
      cursor: o.cursor,
      claims: claims.buffer as SharedArrayBuffer,
      lane,
      cores: o.cores,
      lent: o.lent,
      secrets: hostSecretsOf(Object.values(o.lent)),
      modelKeys: heldModelKeys(),
      ...(o.traceparent ? { traceparent: o.traceparent } : {}),
      ...(o.env ? { env: o.env } : {}),
      nodesets: o.nodesets,
      together: o.together === true,
      reportWritten: o.onEpisodeWritten !== undefined,
    };
    first += o.counts[lane]!;
    const worker = new Worker(PLAY_LANE_MAIN, { workerData: data, name: `play lane ${lane}` });
    workers.push(worker);
    let ended = false;
    let claimed!: () => void;
    claimedOrEnded.push(new Promise<void>((resolve) => (claimed = resolve)));
    drops.push(() => {
      ended = true;
      void worker.terminate();
    });
    const end = (err?: Error): void => {
      claimed();
      if (ended) return;
      ended = true;
      if (err) fail(err);
      // Everything the lane posted has arrived: its thread is no longer needed, whatever it left running.
      void worker.terminate();
    };
    worker.on('message', (m: LaneMessage) => {
      switch (m.type) {
        case 'start':
          o.onEpisodeStart?.({ index: m.index, workerId: m.workerId });
          break;
        case 'written':
          o.onEpisodeWritten?.(m.record);
          break;
        case 'episode': {
          const record = m.record;
          folding = folding
            .then(() => o.addEpisode(record))
            .catch((err: unknown) => fail(err instanceof Error ? err : new Error(String(err))));
          break;
        }
        case 'retire':
          o.retireWorker(m.workerId, m.reason);
          break;
        case 'log':
          o.log(m.line);
          break;
        case 'claimed':
          claimed();
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
    ends.push(
      new Promise<void>((resolve) =>
        worker.on('exit', (code) => {
          end(new Error(`play lane ${lane} ended before its work was done (exit code ${code})`));
          resolve();
        }),
      ),
    );
  }
  const stopped = new WeakSet<Worker>();
  return {
    dropIdle() {
      for (let lane = 1; lane < o.counts.length; lane++) {
        if (Atomics.compareExchange(claims, lane, LANE_IDLE, LANE_DROPPED) === LANE_IDLE) drops[lane - 1]!();
      }
    },
    move(nodeset, url) {
      const secret = hostSecretFor(url);
      const m: LaneRequest = { type: 'moved', nodeset, url, ...(secret !== undefined ? { secret } : {}) };
      for (const w of workers) w.postMessage(m);
    },
    allClaimed: Promise.all(claimedOrEnded).then(() => {}),
    start() {
      for (const w of workers) w.postMessage({ type: 'start' } satisfies LaneRequest);
    },
    go(order) {
      for (const w of workers) if (!stopped.has(w)) w.postMessage({ type: 'go', order } satisfies LaneRequest);
    },
    stop(reason: unknown) {
      const message: LaneRequest = {
        type: 'stop',
        code: reason instanceof CodedError ? reason.code : null,
        message: reason instanceof Error ? reason.message : String(reason),
      };
      for (const w of workers) {
        if (stopped.has(w)) continue;
        stopped.add(w);
        w.postMessage(message);
      }
    },
    done: Promise.all(ends).then(() => folding),
  };
}
