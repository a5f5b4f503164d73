/**
 * Tells the backend at once when a run directory appears in or leaves `<outputs>/eval_runs`
 * (a local `evalctl run` writing into the server's outputs, a folder deleted by hand), so the
 * catalog picks it up without waiting for its periodic rescan. The rescan stays the safety net:
 * fs.watch may miss events (network filesystems, no inotify slots left), never the rescan.
 */
import { watch, type FSWatcher } from 'node:fs';
import { runsRoot } from './run-dir.js';
import { makeDirs } from './make-dirs.js';

export interface RunsRootWatcherOptions {
  outputsDir: string;
  /** Called (debounced) after entries of the runs folder were added, removed or renamed. */
  onChange: () => void;
  /** Trailing debounce, ms. @default 20 */
  debounceMs?: number;
  /** Told when the watch cannot be opened or breaks (the rescan then covers alone). */
  onError?: (err: unknown) => void;
}

export class RunsRootWatcher {
  readonly #opts: RunsRootWatcherOptions;
  #fsWatcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(opts: RunsRootWatcherOptions) {
    this.#opts = opts;
  }

  /** Opens the watch (creating the runs folder, which `createRunDir` would create anyway). */
  start(): void {
    if (this.#closed || this.#fsWatcher) return;
    const root = runsRoot(this.#opts.outputsDir);
    try {
      makeDirs(root);
      this.#fsWatcher = watch(root, { persistent: false }, () => this.#changed());
      this.#fsWatcher.on('error', (err) => {
        this.#opts.onError?.(err);
        this.#fsWatcher?.close();
        this.#fsWatcher = undefined;
      });
    } catch (err) {
      this.#opts.onError?.(err);
    }
  }

  #changed(): void {
    if (this.#closed) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.#closed) this.#opts.onChange();
    }, this.#opts.debounceMs ?? 20);
    this.#timer.unref();
  }

  /** Stops watching; idempotent. */
  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    try {
      this.#fsWatcher?.close();
    } catch {
      // already closed
    }
    this.#fsWatcher = undefined;
  }
}
