/**
 * Live progress from summary.json. One watch per run however many subscribers: a watch on the
 * run DIRECTORY (an atomic rename replaces the inode a file watch would hold), filtered on the
 * name summary.json, re-read after a short trailing debounce; a slow poll is the safety net for
 * missed events.
 *
 * Every read is checked against the summary's schema; a file that is not a valid summary of
 * this run (half-written, garbage, fields missing, another run's) keeps the last good state.
 * Every episode boundary is delivered even when several writes fall between two reads: each
 * newly finished episode becomes a state of its own (ordered by finishedAt, then index, with the
 * aggregates over the episodes up to it), so episodesDone takes every value on the way. `seq`
 * is the watcher's own, one more per state, per run, for the server's life: the file's is a
 * writer's counter, and a forged one must not make anything drop the real states after it.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type Aggregates, computeAggregates } from './aggregate.js';
import { isTerminalRunStatus, type RunStatus } from '../statuses.js';
import { FILES, runDirPath } from './run-dir.js';
import { parseSummaryText, SummaryInvalidError } from './summary-schema.js';
import { changedAfterFinish, recordedSummary } from './summary-digest.js';
import { tailRecords } from './records-file.js';
import type { EpisodeRecord, RunSummary } from './types.js';

export interface RunWatcherOptions {
  outputsDir: string;
  /** Trailing debounce after a change event, in ms. @default 5 */
  debounceMs?: number;
  /** Safety-net poll of each watched run, in ms. @default 1500 */
  pollMs?: number;
  /** How long a watch on a run that is not finished stays open with no subscriber, in ms. @default 60000 */
  idleCloseMs?: number;
  /** Told about unexpected read errors and about a summary.json that turned invalid (the last good state is kept). */
  onError?: (err: unknown, runId: string) => void;
}

/**
 * Called with each new state of the run (its `seq` the watcher's) and the episodes that state
 * added, in the order they finished (none with the first state a subscriber gets).
 */
export type RunStateListener = (state: RunSummary, added: readonly EpisodeRecord[]) => void;

interface Watch {
  runId: string;
  dir: string;
  listeners: Set<RunStateListener>;
  last: RunSummary | undefined;
  /** The visible fields of the last summary taken (everything but seq and episodes), to skip rewrites that change nothing. */
  lastKey: string;
  /** Episodes delivered so far, by index and in the order delivered; states share `order` (it is only appended to). */
  known: Map<number, EpisodeRecord>;
  order: EpisodeRecord[];
  seq: number;
  /** True while summary.json is invalid, so the problem is reported once per spell. */
  invalid: boolean;
  fsWatcher: FSWatcher | undefined;
  poll: NodeJS.Timeout | undefined;
  debounce: NodeJS.Timeout | undefined;
  /** When the pending debounce began, so a stream of events cannot postpone the read forever. */
  debounceSince: number;
  idle: NodeJS.Timeout | undefined;
  reading: Promise<void> | undefined;
  readAgain: boolean;
  /** ino/size/mtime of the file last read, so the poll re-reads only on change. */
  stamp: string;
  /** records.jsonl read up to this byte, of the file with this inode. */
  recordsAt: number;
  recordsIno: number | undefined;
  closed: boolean;
}

/** A trailing debounce never holds a read back longer than this. */
const MAX_DEBOUNCE_WAIT_MS = 50;

/** A run only moves forward: queued, running, over. A state of an earlier phase is an old one. */
const phase = (s: RunStatus): number => (s === 'QUEUED' ? 0 : s === 'RUNNING' ? 1 : 2);

const byIndex = (a: EpisodeRecord, b: EpisodeRecord) => a.index - b.index;
const byFinish = (a: EpisodeRecord, b: EpisodeRecord) =>
  a.finishedAt < b.finishedAt ? -1 : a.finishedAt > b.finishedAt ? 1 : a.index - b.index;

type Fields = Omit<RunSummary, 'episodes'>;

function visibleKey(s: RunSummary): string {
  const { seq: _seq, episodes: _episodes, ...rest } = s;
  return JSON.stringify(rest);
}

/**
 * A state whose records are the first `count` of the shared `order`, listed (index order) when
 * read: a subscriber's queue of states then holds no copy of the records per state.
 */
function makeState(fields: Fields, order: readonly EpisodeRecord[], count: number): RunSummary {
  return {
    ...fields,
    get episodes() {
      return order.slice(0, count).sort(byIndex);
    },
  };
}

/**
 * The state's aggregates over the first `count` of `order`, computed when first read: a write
 * lands every 250 ms with many episodes, and a subscriber that only follows progress should not
 * pay a pass over the run for each boundary in between.
 */
function withLazyAggregates(state: RunSummary, order: readonly EpisodeRecord[], count: number): RunSummary {
  let aggregates: Aggregates | undefined;
  const get = () => (aggregates ??= computeAggregates(order.slice(0, count), state.metricRanges));
  // Redefined in place, so the keys keep the summary's order.
  return Object.defineProperties(state, {
    aggregateMetrics: { get: () => get().aggregateMetrics, enumerable: true, configurable: true },
    aggregateByTask: { get: () => get().aggregateByTask, enumerable: true, configurable: true },
    statusCounts: { get: () => get().statusCounts, enumerable: true, configurable: true },
    timedOut: { get: () => get().timedOut, enumerable: true, configurable: true },
  });
}

/** The fields of a boundary passed between two reads: episodes only finish while the run is running. */
function boundaryFields(next: Fields, last: RunSummary): Fields {
  if (!isTerminalRunStatus(next.status)) return next;
  const pid = next.pid ?? last.pid;
  const { pid: _pid, ...rest } = next;
  return { ...rest, status: 'RUNNING', finishedAt: null, error: null, ...(pid !== undefined ? { pid } : {}) };
}

export class RunWatcher {
  readonly #outputsDir: string;
  readonly #debounceMs: number;
  readonly #pollMs: number;
  readonly #idleCloseMs: number;
  readonly #onError: (err: unknown, runId: string) => void;
  readonly #watches = new Map<string, Watch>();
  /** Each run's last seq, kept after its watch closes so a new watch goes on from it. */
  readonly #seqs = new Map<string, number>();
  #closed = false;

  constructor(options: RunWatcherOptions) {
    this.#outputsDir = options.outputsDir;
    this.#debounceMs = options.debounceMs ?? 5;
    this.#pollMs = options.pollMs ?? 1500;
    this.#idleCloseMs = options.idleCloseMs ?? 60_000;
    this.#onError = options.onError ?? (() => {});
  }

  /** Runs with an open watch (for tests and diagnostics). */
  get watchedRuns(): string[] {
    return [...this.#watches.keys()];
  }

  /** The last good state of a watched run. */
  snapshot(runId: string): RunSummary | undefined {
    return this.#watches.get(runId)?.last;
  }

  /** The seq of the run's newest state this watcher has delivered; 0 when it has delivered none. */
  seqOf(runId: string): number {
    return this.#watches.get(runId)?.seq ?? this.#seqs.get(runId) ?? 0;
  }

  /**
   * Calls `listener` with the run's current state (as soon as it has been read) and then with
   * every later state: one per episode boundary and one per other change. Returns the
   * unsubscribe function. Throws BAD_USER_INPUT for a malformed run id.
   */
  subscribe(runId: string, listener: RunStateListener): () => void {
    if (this.#closed) throw new Error('RunWatcher is closed');
    const w = this.#open(runId);
    w.listeners.add(listener);
    if (w.idle) {
      clearTimeout(w.idle);
      w.idle = undefined;
    }
    const current = w.last;
    if (current)
      queueMicrotask(() => {
        if (w.listeners.has(listener) && w.last === current) this.#call(listener, current, [], runId);
      });
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      w.listeners.delete(listener);
      this.#maybeClose(w);
    };
  }

  /**
   * A state known from elsewhere (the scheduler's own status changes: admitted, cancelled
   * while queued, aborted at reap). Taken by the same rules as a read, then the file is re-read.
   */
  offer(runId: string, summary: RunSummary): void {
    const w = this.#watches.get(runId);
    if (!w) return;
    this.#accept(w, summary);
    this.#scheduleRead(w, 0);
  }

  /**
   * A finished run that is going again (a retry, docs/retry.md): its watch, which takes nothing
   * after a terminal state, is closed, so the next subscriber follows the new attempt from its
   * first state. Subscribers of the old watch already had its terminal state.
   */
  reopen(runId: string): void {
    const w = this.#watches.get(runId);
    if (w?.last && isTerminalRunStatus(w.last.status)) this.#closeWatch(w);
  }

  /** Reads summary.json once more now (e.g. when the run's process has exited). */
  refresh(runId: string): void {
    const w = this.#watches.get(runId);
    if (w) this.#scheduleRead(w, 0);
  }

  /** Closes every watch; idempotent. */
  close(): void {
    this.#closed = true;
    for (const w of [...this.#watches.values()]) this.#closeWatch(w);
  }

  #open(runId: string): Watch {
    const existing = this.#watches.get(runId);
    if (existing) return existing;
    const dir = runDirPath(this.#outputsDir, runId);
    const w: Watch = {
      runId,
      dir,
      listeners: new Set(),
      last: undefined,
      lastKey: '',
      known: new Map(),
      order: [],
      seq: this.#seqs.get(runId) ?? 0,
      invalid: false,
      fsWatcher: undefined,
      poll: undefined,
      debounce: undefined,
      debounceSince: 0,
      idle: undefined,
      reading: undefined,
      readAgain: false,
      stamp: '',
      recordsAt: 0,
      recordsIno: undefined,
      closed: false,
    };
    this.#watches.set(runId, w);
    try {
      w.fsWatcher = watch(dir, { persistent: false }, (_event, filename) => {
        if (filename === null || filename === FILES.summary) this.#scheduleRead(w, this.#debounceMs);
      });
      w.fsWatcher.on('error', (err) => {
        // The directory went away or the watch broke: the poll keeps the run covered.
        this.#onError(err, runId);
        w.fsWatcher?.close();
        w.fsWatcher = undefined;
      });
    } catch (err) {
      // No directory yet (or no inotify slots left): the poll alone covers it.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.#onError(err, runId);
    }
    w.poll = setInterval(() => void this.#pollOnce(w), this.#pollMs);
    w.poll.unref();
    this.#scheduleRead(w, 0);
    return w;
  }

  #scheduleRead(w: Watch, delayMs: number): void {
    if (w.closed) return;
    const now = performance.now();
    if (w.debounce) {
      if (now - w.debounceSince >= MAX_DEBOUNCE_WAIT_MS && delayMs > 0) return;
      clearTimeout(w.debounce);
    } else {
      w.debounceSince = now;
    }
    w.debounce = setTimeout(() => {
      w.debounce = undefined;
      void this.#read(w);
    }, delayMs);
  }

  async #pollOnce(w: Watch): Promise<void> {
    if (w.closed || w.reading) return;
    try {
      const s = await stat(join(w.dir, FILES.summary));
      if (`${s.ino}:${s.size}:${s.mtimeMs}` !== w.stamp) await this.#read(w);
    } catch {
      // Missing for now; the next poll or event will find it.
    }
  }

  #read(w: Watch): Promise<void> {
    if (w.reading) {
      w.readAgain = true;
      return w.reading;
    }
    w.reading = (async () => {
      do {
        w.readAgain = false;
        await this.#readOnce(w);
      } while (w.readAgain && !w.closed);
    })().finally(() => {
      w.reading = undefined;
    });
    return w.reading;
  }

  async #readOnce(w: Watch): Promise<void> {
    const path = join(w.dir, FILES.summary);
    let text: string;
    try {
      const s = await stat(path);
      text = await readFile(path, 'utf8');
      w.stamp = `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.#onError(err, w.runId);
      return;
    }
    let summary: RunSummary;
    try {
      const modified = await changedAfterFinish(w.dir, text);
      summary = modified
        ? await recordedSummary(w.dir, modified)
        : parseSummaryText(text, { source: `summary.json of run ${w.runId}`, runId: w.runId, known: w.known });
    } catch (err) {
      // Keep the last good state; the poll reads it again even if no event comes.
      w.stamp = '';
      if (!w.invalid || !(err instanceof SummaryInvalidError)) this.#onError(err, w.runId);
      w.invalid = err instanceof SummaryInvalidError;
      return;
    }
    w.invalid = false;
    if (summary.episodes.length > 0) {
      // A summary.json that holds its records (written before records.jsonl).
      this.#accept(w, summary);
      return;
    }
    let tail: Awaited<ReturnType<typeof tailRecords>>;
    try {
      tail = await tailRecords(w.dir, w.recordsAt, w.recordsIno);
    } catch (err) {
      this.#onError(err, w.runId);
      return;
    }
    if (tail) {
      w.recordsAt = tail.next;
      w.recordsIno = tail.ino;
    }
    this.#accept(w, summary, { added: tail?.records ?? [], restart: tail?.restart ?? false });
  }

  /**
   * Takes `next` unless it is older than what was delivered (an earlier phase, episodes missing
   * within the same phase) or the run is already over; delivers one state per episode it adds.
   */
  #accept(w: Watch, next: RunSummary, tail?: { added: readonly EpisodeRecord[]; restart: boolean }): void {
    if (w.closed) return;
    const last = w.last;
    if (last && (isTerminalRunStatus(last.status) || phase(next.status) < phase(last.status))) return;
    let added: EpisodeRecord[];
    let restart: boolean;
    if (tail) {
      // The lines appended since the last read; a later line for an index replaces an earlier one.
      const latest = new Map<number, EpisodeRecord>();
      for (const r of tail.added) latest.set(r.index, r);
      restart = tail.restart;
      added = [...latest.values()].filter((r) => restart || !w.known.has(r.index));
    } else if (next.episodes.length === 0 && next.episodesDone > 0) {
      // A state without its records (they are in records.jsonl): the read this offer schedules brings them.
      added = [];
      restart = false;
    } else {
      added = next.episodes.filter((r) => !w.known.has(r.index));
      restart = next.episodes.length - added.length < w.known.size;
      if (restart) {
        // Same phase: an older write. A later phase that lost episodes: a summary rewritten from scratch, taken as it is.
        if (last && phase(next.status) === phase(last.status)) return;
        added = [...next.episodes];
      }
    }
    const key = visibleKey(next);
    if (last && added.length === 0 && key === w.lastKey) return;
    if (restart) {
      w.known = new Map();
      w.order = [];
    }
    added.sort(byFinish);
    const { episodes: _episodes, ...fields } = next;
    // The boundaries passed since the last read, each its own state; a watch's first state is simply the current one.
    const between = last && !restart ? added.length - 1 : 0;
    for (let i = 0; i < between && !w.closed; i++) {
      const record = added[i]!;
      w.known.set(record.index, record);
      w.order.push(record);
      const state = withLazyAggregates(
        makeState({ ...boundaryFields(fields, last!), episodesDone: w.order.length, seq: w.seq + 1 }, w.order, w.order.length),
        w.order,
        w.order.length,
      );
      this.#deliver(w, state, [record]);
    }
    const rest = added.slice(between);
    for (const record of rest) {
      w.known.set(record.index, record);
      w.order.push(record);
    }
    w.lastKey = key;
    // records.jsonl is ahead of summary.json (lines appended since its last write): the state follows the records.
    const ahead = tail !== undefined && w.order.length > fields.episodesDone;
    const state = makeState({ ...fields, ...(ahead ? { episodesDone: w.order.length } : {}), seq: w.seq + 1 }, w.order, w.order.length);
    this.#deliver(w, ahead ? withLazyAggregates(state, w.order, w.order.length) : state, rest);
    this.#maybeClose(w);
  }

  #deliver(w: Watch, state: RunSummary, added: readonly EpisodeRecord[]): void {
    if (w.closed) return;
    w.seq = state.seq;
    this.#seqs.set(w.runId, w.seq);
    w.last = state;
    for (const listener of [...w.listeners]) this.#call(listener, state, added, w.runId);
  }

  #call(listener: RunStateListener, state: RunSummary, added: readonly EpisodeRecord[], runId: string): void {
    try {
      listener(state, added);
    } catch (err) {
      this.#onError(err, runId);
    }
  }

  #maybeClose(w: Watch): void {
    if (w.closed || w.listeners.size > 0) return;
    if (w.last && isTerminalRunStatus(w.last.status)) {
      this.#closeWatch(w);
      return;
    }
    if (!w.idle) {
      w.idle = setTimeout(() => {
        w.idle = undefined;
        if (w.listeners.size === 0) this.#closeWatch(w);
      }, this.#idleCloseMs);
      w.idle.unref();
    }
  }

  #closeWatch(w: Watch): void {
    if (w.closed) return;
    w.closed = true;
    for (const t of [w.debounce, w.idle]) if (t) clearTimeout(t);
    if (w.poll) clearInterval(w.poll);
    try {
      w.fsWatcher?.close();
    } catch {
      // already closed
    }
    if (this.#watches.get(w.runId) === w) this.#watches.delete(w.runId);
  }
}
