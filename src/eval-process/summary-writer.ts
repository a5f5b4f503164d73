/**
 * Owns a run's summary.json and records.jsonl: each finished record is appended to
 * records.jsonl as it comes (one line, store/records-file.ts) and folded into the aggregates in
 * run-index order (store/aggregate-fold.ts; a record that comes early waits until the ones before
 * it are in); summary.json, the run's state and aggregates only, is rewritten at most every
 * `minIntervalMs`. The writer keeps no list of the records: its memory and each write's cost do
 * not grow with the run (the fold keeps one number per record and metric). Every write is atomic
 * with a higher `seq`, under one lock so writes never overtake each other; a record's line is on
 * disk before any summary.json that counts it.
 */
import { existsSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { isTerminalRunStatus, type RunStatus } from '../statuses.js';
import { writeFileAtomic } from '../store/atomic.js';
import { FILES, readSummaryHead } from '../store/run-dir.js';
import { cutTornLine, readRecords, recordLine, recordsPath } from '../store/records-file.js';
import { recordSummaryDigest } from '../store/summary-digest.js';
import type { EpisodeRecord, RunSpec, RunSummary, StopWhenState } from '../store/types.js';
import { type Aggregates, computeAggregates } from '../store/aggregate.js';
import { AggregateFold } from '../store/aggregate-fold.js';
import { playCountOf, repeatsOf } from '../spec/repeats.js';
import { episodeIndicesOf } from '../spec/shards.js';
import { summaryText } from '../store/summary-digest.js';

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
    // summary.json holds none: they are in records.jsonl (the key keeps its place for readers that attach them).
    episodes: [],
  };
}

export class SummaryWriter {
  readonly runDir: string;
  /** The summary as last written (its `episodes` an empty placeholder that keeps the key's place). */
  readonly #summary: RunSummary;
  readonly #minIntervalMs: number;
  /** The run indices in the order they fold; `#next` is the position of the next one to fold. */
  readonly #order: readonly number[];
  /** Position of an index in `#order`; absent when the order is simply 0, 1, 2 … */
  readonly #positions: Map<number, number> | undefined;
  #next = 0;
  #fold: AggregateFold;
  /** Records that came before the ones ahead of them in `#order`: folded once the gap fills. */
  readonly #early = new Map<number, EpisodeRecord>();
  /** Every index with a record (its count is episodesDone). */
  readonly #done = new Set<number>();
  /**
   * True once the fold cannot be trusted (a folded record replaced, a record outside the run's
   * indices, plays mixing repeats): each write then computes the aggregates from records.jsonl.
   */
  #fromFile = false;
  /** The aggregates as last written, for views while `#fromFile`. */
  #written: Aggregates | undefined;
  /** Appends to records.jsonl, in order; the handle is opened at the first. */
  #appends: Promise<unknown> = Promise.resolve();
  #file: Promise<FileHandle> | undefined;
  #appendError: unknown;
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
    this.#positions = order.every((index, at) => index === at) ? undefined : new Map(order.map((index, at) => [index, at]));
    this.#minIntervalMs = options.minIntervalMs ?? SUMMARY_MIN_INTERVAL_MS;
    this.#fold = new AggregateFold(summary.metricRanges);
  }

  /** Starts from the spec, continuing the `seq` of a summary.json already in the run dir. */
  static async open(runDir: string, spec: RunSpec, options: SummaryWriterOptions = {}): Promise<SummaryWriter> {
    const summary = initialSummary(spec);
    if (existsSync(join(runDir, FILES.summary))) {
      try {
        const prev = await readSummaryHead(runDir);
        if (Number.isFinite(prev.seq)) summary.seq = prev.seq;
      } catch {
        // An unreadable summary is replaced; seq restarts above 0.
      }
    }
    return new SummaryWriter(runDir, summary, episodeIndicesOf(spec), options);
  }

  /** A snapshot of the current summary, every episode added so far included (its records are in records.jsonl). */
  get summary(): RunSummary {
    return JSON.parse(summaryText({ ...this.#summary, ...this.#aggregates(), episodesDone: this.#done.size })) as RunSummary;
  }

  /** Whether episode `index` has a record. */
  has(index: number): boolean {
    return this.#done.has(index);
  }

  /**
   * Starts from records kept from earlier attempts, already in records.jsonl (a retry plays only
   * the others): folded, not appended again. Call before start(), so no state of the run ever
   * shows fewer records than the one before.
   */
  keep(records: Iterable<EpisodeRecord>): void {
    for (const r of records) this.#ingest(r);
  }

  /** Records put back into the run (a retry that stopped early): appended to records.jsonl and folded. */
  putBack(records: readonly EpisodeRecord[]): void {
    for (const r of records) {
      this.#append(r);
      this.#ingest(r);
    }
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
   * Appends an episode's record to records.jsonl (it replaces an earlier one of the same index)
   * and folds it into the aggregates. Writes summary.json at once when the last write is
   * `minIntervalMs` old (resolving once it is on disk), else leaves it to the write already
   * scheduled. Resolves with a summary that counts the record, whose aggregates are computed
   * when first read.
   */
  addEpisode(record: EpisodeRecord): Promise<RunSummary> {
    this.#append(record);
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

  /** Resolves once every record added so far is in records.jsonl (rejects with the append's error). */
  async appended(): Promise<void> {
    await this.#appends;
    if (this.#appendError !== undefined) throw this.#appendError;
  }

  /** Records a worker that retired; it is in summary.json from the next write on (the final one at the latest). */
  retireWorker(workerId: number, reason: string): void {
    this.#summary.retiredWorkers = [...(this.#summary.retiredWorkers ?? []), { workerId, reason }];
  }

  /** A stopWhen run's watch as it now stands; in summary.json from the next write on. */
  setStopWhen(state: StopWhenState): void {
    this.#summary.stopWhen = state;
  }

  /** Writes the terminal state, with every episode added, and closes records.jsonl. */
  async finish(status: RunStatus, error: { code: string; message: string } | null = null, finishedAt = new Date()): Promise<RunSummary> {
    try {
      return await this.#write((s) => {
        s.status = status;
        s.error = error;
        s.finishedAt = finishedAt.toISOString();
        delete s.pid;
      });
    } finally {
      const file = this.#file;
      this.#file = undefined;
      if (file) await file.then((fh) => fh.close()).catch(() => {});
    }
  }

  #append(record: EpisodeRecord): void {
    const line = recordLine(record);
    this.#file ??= (async () => {
      await cutTornLine(recordsPath(this.runDir));
      return open(recordsPath(this.runDir), 'a');
    })();
    const file = this.#file;
    this.#appends = this.#appends
      .then(() => file)
      .then((fh) => fh.write(line))
      .catch((err: unknown) => {
        this.#appendError ??= err;
      });
  }

  #position(index: number): number {
    if (!this.#positions) return index < this.#order.length ? index : -1;
    return this.#positions.get(index) ?? -1;
  }

  #ingest(record: EpisodeRecord): void {
    const { index } = record;
    const at = this.#position(index);
    const replaced = this.#done.has(index);
    this.#done.add(index);
    // Outside the run's indices, or a folded record replaced: only a pass over the file gives the aggregates now.
    if (at < 0 || (replaced && at < this.#next) || this.#fromFile) {
      this.#fromFile = true;
      this.#early.clear();
      return;
    }
    this.#early.set(index, record);
    for (; this.#next < this.#order.length; this.#next++) {
      const i = this.#order[this.#next]!;
      const next = this.#early.get(i);
      if (!next) break;
      this.#early.delete(i);
      this.#fold.fold(next);
    }
    if (!this.#fold.exact) {
      this.#fromFile = true;
      this.#early.clear();
    }
  }

  /** The aggregates over every record added, when the fold can tell: the fold, plus the early records folded into a copy. */
  #foldedAggregates(): Aggregates | undefined {
    if (this.#fromFile) return undefined;
    if (this.#early.size === 0) return this.#fold.aggregates();
    const fold = this.#fold.clone();
    for (const r of [...this.#early.values()].sort((a, b) => this.#position(a.index) - this.#position(b.index))) fold.fold(r);
    return fold.exact ? fold.aggregates() : undefined;
  }

  #aggregates(): Aggregates {
    return this.#foldedAggregates() ?? this.#written ?? computeAggregates([], this.#summary.metricRanges);
  }

  /** The aggregates read from records.jsonl (streamed, one record at a time into a fold, or whole when the fold cannot tell). */
  async #aggregatesFromFile(): Promise<Aggregates> {
    const fold = new AggregateFold(this.#summary.metricRanges);
    for await (const r of readRecords(this.runDir)) {
      fold.fold(r);
      if (!fold.exact) break;
    }
    if (fold.exact) return fold.aggregates();
    const all: EpisodeRecord[] = [];
    for await (const r of readRecords(this.runDir)) all.push(r);
    return computeAggregates(all, this.#summary.metricRanges);
  }

  /** The summary with every episode added so far, its aggregates computed when first read. */
  #view(seq: number): RunSummary {
    const view: RunSummary = { ...this.#summary, seq, episodesDone: this.#done.size };
    let aggregates: Aggregates | undefined;
    const get = () => (aggregates ??= this.#aggregates());
    // Redefined in place, so the keys keep the summary's order.
    Object.defineProperties(view, {
      aggregateMetrics: { get: () => get().aggregateMetrics, enumerable: true, configurable: true },
      aggregateByTask: { get: () => get().aggregateByTask, enumerable: true, configurable: true },
      statusCounts: { get: () => get().statusCounts, enumerable: true, configurable: true },
      timedOut: { get: () => get().timedOut, enumerable: true, configurable: true },
    });
    return view;
  }

  /**
   * Writes summary.json after `change`, with every episode added by then (their lines written
   * first). Resolves with a snapshot (`snapshot`), or with a view of it when the caller only
   * follows progress; either way its records are in records.jsonl, not in `episodes`.
   */
  #write(change?: (s: RunSummary) => void, snapshot = true): Promise<RunSummary> {
    this.#inFlight += 1;
    const next = this.#lock
      .then(async () => {
        clearTimeout(this.#timer);
        this.#timer = undefined;
        this.#lastWriteAt = performance.now();
        change?.(this.#summary);
        const done = this.#done.size;
        await this.#appends;
        if (this.#appendError !== undefined) throw this.#appendError;
        const aggregates = this.#foldedAggregates() ?? (await this.#aggregatesFromFile());
        this.#written = aggregates;
        Object.assign(this.#summary, aggregates);
        this.#summary.episodesDone = done;
        this.#summary.seq += 1;
        const text = summaryText(this.#summary);
        const seq = this.#summary.seq;
        await writeFileAtomic(join(this.runDir, FILES.summary), text);
        if (isTerminalRunStatus(this.#summary.status)) await recordSummaryDigest(this.runDir, text, this.#summary);
        return snapshot ? ({ ...(JSON.parse(text) as RunSummary), episodes: [] } as RunSummary) : this.#view(seq);
      })
      .finally(() => {
        this.#inFlight -= 1;
      });
    this.#lock = next.catch(() => {});
    return next;
  }
}
