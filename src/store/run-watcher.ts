/**
 * Live progress from summary.json. One watch per run however many subscribers: a watch on the
 * run DIRECTORY (an atomic rename replaces the inode a file watch would hold), filtered on the
 * name summary.json, re-read after a short trailing debounce. A snapshot is kept only when its
 * `seq` is newer (or it carries a status change); a half-written or unreadable file keeps the
 * last good snapshot; a slow poll is the safety net for missed events.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isTerminalRunStatus } from '../statuses.js';
import { FILES, runDirPath } from './run-dir.js';
import type { RunSummary } from './types.js';

export interface RunWatcherOptions {
  outputsDir: string;
  /** Trailing debounce after a change event, in ms. @default 5 */
  debounceMs?: number;
  /** Safety-net poll of each watched run, in ms. @default 1500 */
  pollMs?: number;
  /** How long a watch on a run that is not finished stays open with no subscriber, in ms. @default 60000 */
  idleCloseMs?: number;
  /** Told about unexpected read errors (the last good snapshot is kept). */
  onError?: (err: unknown, runId: string) => void;
}

export type SummaryListener = (summary: RunSummary) => void;

interface Watch {
  runId: string;
  dir: string;
  listeners: Set<SummaryListener>;
  last: RunSummary | undefined;
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
  closed: boolean;
}

/** True when `next` should replace `prev`: a newer seq, or a status change with the same seq (never out of a terminal state). */
export function isNewerSummary(prev: RunSummary | undefined, next: RunSummary): boolean {
  if (!prev) return true;
  if (next.seq > prev.seq) return true;
  return next.seq === prev.seq && next.status !== prev.status && !isTerminalRunStatus(prev.status);
}

/** A trailing debounce never holds a read back longer than this. */
const MAX_DEBOUNCE_WAIT_MS = 50;

const isSummary = (v: unknown): v is RunSummary =>
  typeof v === 'object' && v !== null && typeof (v as RunSummary).seq === 'number' && typeof (v as RunSummary).status === 'string';

export class RunWatcher {
  readonly #outputsDir: string;
  readonly #debounceMs: number;
  readonly #pollMs: number;
  readonly #idleCloseMs: number;
  readonly #onError: (err: unknown, runId: string) => void;
  readonly #watches = new Map<string, Watch>();
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

  /** The last good snapshot of a watched run. */
  snapshot(runId: string): RunSummary | undefined {
    return this.#watches.get(runId)?.last;
  }

  /**
   * Calls `listener` with the run's current state (as soon as it has been read) and then with
   * every newer snapshot. Returns the unsubscribe function. Throws BAD_USER_INPUT for a
   * malformed run id.
   */
  subscribe(runId: string, listener: SummaryListener): () => void {
    if (this.#closed) throw new Error('RunWatcher is closed');
    const w = this.#open(runId);
    w.listeners.add(listener);
    if (w.idle) {
      clearTimeout(w.idle);
      w.idle = undefined;
    }
    const current = w.last;
    if (current) queueMicrotask(() => {
      if (w.listeners.has(listener) && w.last === current) this.#call(listener, current, runId);
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
   * while queued, aborted at reap). Applied with the same seq rule, then the file is re-read.
   */
  offer(runId: string, summary: RunSummary): void {
    const w = this.#watches.get(runId);
    if (!w) return;
    this.#accept(w, summary);
    this.#scheduleRead(w, 0);
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
      fsWatcher: undefined,
      poll: undefined,
      debounce: undefined,
      debounceSince: 0,
      idle: undefined,
      reading: undefined,
      readAgain: false,
      stamp: '',
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
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Half-written or corrupt: keep the last good snapshot; the next change re-reads.
      w.stamp = '';
      return;
    }
    if (isSummary(parsed)) this.#accept(w, parsed);
  }

  #accept(w: Watch, summary: RunSummary): void {
    if (w.closed || !isNewerSummary(w.last, summary)) return;
    w.last = summary;
    for (const listener of [...w.listeners]) this.#call(listener, summary, w.runId);
    this.#maybeClose(w);
  }

  #call(listener: SummaryListener, summary: RunSummary, runId: string): void {
    try {
      listener(summary);
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
