/**
 * Owns a run's summary.json: the start and the end are written at once; episodes are folded
 * into the aggregates as they come (store/aggregate-fold.ts) and written at most every
 * `minIntervalMs`, so a run pays neither a pass over all its records nor a rewrite of the whole
 * file per episode. Every write is atomic with a higher `seq`, under one lock so writes never
 * overtake each other; each record is serialised once.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { isTerminalRunStatus, type RunStatus } from '../statuses.js';
import { writeFileAtomic } from '../store/atomic.js';
import { FILES, readSummary } from '../store/run-dir.js';
import { recordSummaryDigest } from '../store/summary-digest.js';
import type { EpisodeRecord, RunSpec, RunSummary, StopWhenState } from '../store/types.js';
import { type Aggregates, computeAggregates } from '../store/aggregate.js';
import { AggregateFold } from '../store/aggregate-fold.js';
import { playCountOf, repeatsOf } from '../spec/repeats.js';
import { episodeIndicesOf } from '../spec/shards.js';
import { recordJsonInSummary, summaryJsonText } from './summary-json.js';

/** The spec fields a summary repeats. */
export type SummarySpec = Pick<
  RunSpec,
  'runId' | 'graphName' | 'episodeCount' | 'workerCount' | 'seed' | 'priority' | 'createdAt' | 'repeats' | 'metricRanges'
>;

/** While episodes come in, summary.json is rewritten at most this often (a watcher still gets every boundary: see store/run-watcher.ts). */
export const SUMMARY_MIN_INTERVAL_MS = 250;

export interface SummaryWriterOptions {
  /** Shortest time between two rewrites while episodes come in; 0 writes at each episode. @default SUMMARY_MIN_INTERVAL_MS */
  minIntervalMs?: number;
}

export function initialSummary(spec: SummarySpec, status: RunStatus = 'QUEUED'): RunSummary {
  return {
    seq: 0,
    runId: spec.runId,
    status,
    graphName: spec.graphName,
    // Plays: episodeCount × repeats, the records the run will have (episodesDone counts them too).
    episodeCount: playCountOf(spec),
    ...(repeatsOf(spec) > 1 ? { repeats: repeatsOf(spec) } : {}),
    workerCount: spec.workerCount,
    seed: spec.seed,
    priority: spec.priority,
    episodesDone: 0,
    createdAt: spec.createdAt,
    startedAt: null,
    finishedAt: null,
    error: null,
    ...(spec.metricRanges ? { metricRanges: spec.metricRanges } : {}),
    aggregateMetrics: [],
    aggregateByTask: {},
    statusCounts: {},
    timedOut: false,
    episodes: [],
  };
}

export class SummaryWriter {
  readonly runDir: string;
  /** The summary as last written (its `episodes` an empty placeholder that keeps the key's place). */
  readonly #summary: RunSummary;
  readonly #minIntervalMs: number;
  readonly #records = new Map<number, EpisodeRecord>();
  /** The records in index order, and each one's text in summary.json. */
  readonly #sorted: EpisodeRecord[] = [];
  readonly #texts = new Map<number, string>();
  /** The run indices in the order they fold; `#next` is the position of the next one to fold. */
  readonly #order: readonly number[];
  #next = 0;
  #fold: AggregateFold;
  /** Every record at or below this index (and in `#order`) is folded. */
  #foldedUpTo = -1;
  #lock: Promise<unknown> = Promise.resolve();
  #inFlight = 0;
  #lastWriteAt = -Infinity;
  #timer: NodeJS.Timeout | undefined;
  /** A deferred write that failed: the next episode added reports it, as a write of its own would have. */
  #writeError: unknown;

  private constructor(runDir: string, summary: RunSummary, order: readonly number[], options: SummaryWriterOptions) {
    this.runDir = runDir;
    this.#summary = summary;
    this.#order = order;
    this.#minIntervalMs = options.minIntervalMs ?? SUMMARY_MIN_INTERVAL_MS;
    this.#fold = new AggregateFold(summary.metricRanges);
  }

  /** Starts from the spec, continuing the `seq` of a summary.json already in the run dir. */
  static async open(runDir: string, spec: RunSpec, options: SummaryWriterOptions = {}): Promise<SummaryWriter> {
    const summary = initialSummary(spec);
    if (existsSync(join(runDir, FILES.summary))) {
      try {
        const prev = await readSummary(runDir);
        if (Number.isFinite(prev.seq)) summary.seq = prev.seq;
      } catch {
        // An unreadable summary is replaced; seq restarts above 0.
      }
    }
    return new SummaryWriter(runDir, summary, episodeIndicesOf(spec), options);
  }

  /** A snapshot of the current summary, every episode added so far included. */
  get summary(): RunSummary {
    return JSON.parse(this.#text({ ...this.#summary, ...this.#aggregates(), episodesDone: this.#records.size })) as RunSummary;
  }

  get records(): EpisodeRecord[] {
    return this.#sorted.slice();
  }

  /**
   * Starts from records kept from earlier attempts (a retry plays only the others); call before
   * start(), so no state of the run ever shows fewer records than the one before.
   */
  keep(records: readonly EpisodeRecord[]): void {
    for (const r of records) this.#ingest(r);
  }

  /** Marks the run RUNNING (with the eval process pid) and writes it. */
  start(pid: number = process.pid, startedAt = new Date()): Promise<RunSummary> {
    return this.#write((s) => {
      s.status = 'RUNNING';
      s.startedAt = startedAt.toISOString();
      s.pid = pid;
    });
  }

  /**
   * Adds (or replaces) an episode's record and folds it into the aggregates. Writes at once when
   * the last write is `minIntervalMs` old (resolving once it is on disk), else leaves it to the
   * write already scheduled. Resolves with a summary that includes the record, whose aggregates
   * and episodes are computed when first read.
   */
  addEpisode(record: EpisodeRecord): Promise<RunSummary> {
    this.#ingest(record);
    if (this.#writeError !== undefined) {
      const err = this.#writeError;
      this.#writeError = undefined;
      return Promise.reject(err);
    }
    const wait = this.#lastWriteAt + this.#minIntervalMs - performance.now();
    if (this.#timer === undefined && this.#inFlight === 0 && wait <= 0) return this.#write(undefined, false);
    this.#timer ??= setTimeout(
      () => {
        this.#timer = undefined;
        this.#write(undefined, false).catch((err: unknown) => {
          this.#writeError = err;
        });
      },
      Math.max(0, wait),
    );
    // Never holds a process open: finish() writes whatever is left.
    this.#timer.unref();
    return Promise.resolve(this.#view(this.#summary.seq + 1));
  }

  /** Writes now whatever episodes are not on disk yet (a run being stopped, before it winds down). */
  flush(): Promise<void> {
    if (this.#timer === undefined) return this.#lock.then(() => {});
    return this.#write(undefined, false).then(() => {});
  }

  /** Records a worker that retired; it is in summary.json from the next write on (the final one at the latest). */
  retireWorker(workerId: number, reason: string): void {
    this.#summary.retiredWorkers = [...(this.#summary.retiredWorkers ?? []), { workerId, reason }];
  }

  /** A stopWhen run's watch as it now stands; in summary.json from the next write on. */
  setStopWhen(state: StopWhenState): void {
    this.#summary.stopWhen = state;
  }

  /** Writes the terminal state, with every episode added. */
  finish(status: RunStatus, error: { code: string; message: string } | null = null, finishedAt = new Date()): Promise<RunSummary> {
    return this.#write((s) => {
      s.status = status;
      s.error = error;
      s.finishedAt = finishedAt.toISOString();
      delete s.pid;
    });
  }

  #ingest(record: EpisodeRecord): void {
    const { index } = record;
    const replaced = this.#records.has(index);
    this.#records.set(index, record);
    this.#texts.set(index, recordJsonInSummary(record));
    const at = sortedPosition(this.#sorted, index);
    if (replaced) {
      this.#sorted[at] = record;
      // A folded record changed: fold again from the first record.
      if (index <= this.#foldedUpTo) {
        this.#fold = new AggregateFold(this.#summary.metricRanges);
        this.#next = 0;
        this.#foldedUpTo = -1;
      }
    } else {
      this.#sorted.splice(at, 0, record);
    }
    for (; this.#next < this.#order.length; this.#next++) {
      const next = this.#records.get(this.#order[this.#next]!);
      if (!next) break;
      this.#fold.fold(next);
      this.#foldedUpTo = next.index;
    }
  }

  /** The aggregates over every record added: the fold, plus the records past it folded into a copy. */
  #aggregates(): Aggregates {
    const folded = this.#fold.count;
    if (!this.#fold.exact) return computeAggregates(this.#sorted, this.#summary.metricRanges);
    if (folded === this.#sorted.length) return this.#fold.aggregates();
    const tail = this.#sorted.slice(sortedPosition(this.#sorted, this.#foldedUpTo + 1));
    // A record outside the run's indices, below the fold's end: fold order would not be index order.
    if (folded + tail.length !== this.#sorted.length) return computeAggregates(this.#sorted, this.#summary.metricRanges);
    const fold = this.#fold.clone();
    for (const r of tail) fold.fold(r);
    return fold.exact ? fold.aggregates() : computeAggregates(this.#sorted, this.#summary.metricRanges);
  }

  #text(summary: RunSummary): string {
    return summaryJsonText(
      summary,
      this.#sorted.map((r) => this.#texts.get(r.index)!),
    );
  }

  /** The summary with every episode added so far, its heavy fields computed when first read. */
  #view(seq: number): RunSummary {
    const view: RunSummary = { ...this.#summary, seq, episodesDone: this.#records.size };
    let aggregates: Aggregates | undefined;
    let episodes: EpisodeRecord[] | undefined;
    const get = () => (aggregates ??= this.#aggregates());
    // Redefined in place, so the keys keep the summary's order.
    Object.defineProperties(view, {
      aggregateMetrics: { get: () => get().aggregateMetrics, enumerable: true, configurable: true },
      aggregateByTask: { get: () => get().aggregateByTask, enumerable: true, configurable: true },
      statusCounts: { get: () => get().statusCounts, enumerable: true, configurable: true },
      timedOut: { get: () => get().timedOut, enumerable: true, configurable: true },
      episodes: { get: () => (episodes ??= this.#sorted.slice()), enumerable: true, configurable: true },
    });
    return view;
  }

  /**
   * Writes summary.json after `change`, with every episode added by then. Resolves with a full
   * snapshot (`snapshot`), or with a view of it when the caller only follows progress.
   */
  #write(change?: (s: RunSummary) => void, snapshot = true): Promise<RunSummary> {
    this.#inFlight += 1;
    const next = this.#lock
      .then(async () => {
        clearTimeout(this.#timer);
        this.#timer = undefined;
        this.#lastWriteAt = performance.now();
        change?.(this.#summary);
        Object.assign(this.#summary, this.#aggregates());
        this.#summary.episodesDone = this.#records.size;
        this.#summary.seq += 1;
        const text = this.#text(this.#summary);
        const seq = this.#summary.seq;
        await writeFileAtomic(join(this.runDir, FILES.summary), text);
        if (isTerminalRunStatus(this.#summary.status)) await recordSummaryDigest(this.runDir, text, this.#summary);
        return snapshot ? (JSON.parse(text) as RunSummary) : this.#view(seq);
      })
      .finally(() => {
        this.#inFlight -= 1;
      });
    this.#lock = next.catch(() => {});
    return next;
  }
}

/** Where `index` is, or goes, in records sorted by index. */
function sortedPosition(sorted: readonly EpisodeRecord[], index: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]!.index < index) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
