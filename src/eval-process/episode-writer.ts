/**
 * Writes one episode's directory, `episodes/epNNNN/`: log.jsonl (this episode's node firings
 * only, streamed as they happen), events.jsonl (the `$events` its nodes emitted: model calls,
 * retries; only when there are some), assets/ (its files) and episode.json (its record), so the
 * episode can be understood from its own folder alone.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { EpisodeEvent, FiringLogEntry } from '../core/types.js';
import { writeJsonAtomic } from '../store/atomic.js';
import { ensureEpisodeDir } from '../store/run-dir.js';
import type { EpisodeRecord } from '../store/types.js';

export const EPISODE_FILES = { record: 'episode.json', log: 'log.jsonl', events: 'events.jsonl', assets: 'assets' } as const;

const LOG_FLUSH_BYTES = 64 * 1024;

export interface AssetFile {
  name: string;
  mime: string;
  data: Buffer;
  nodeId: string;
  step: number;
}

/** A file name safe to create inside assets/: no folders, no dot-files. */
export function safeAssetName(name: string): string {
  const base = basename(name.replaceAll('\\', '/')).replace(/[^A-Za-z0-9._-]/g, '_');
  return base.replace(/^\.+/, '') || 'asset';
}

export class EpisodeWriter {
  readonly dir: string;
  readonly #log: WriteStream;
  readonly #pending: Promise<unknown>[] = [];
  #logError: Error | undefined;
  #buffered: string[] = [];
  #bufferedBytes = 0;
  #closed: Promise<void> | undefined;
  /** Opened at the first event, so episodes of graphs that emit none get no file. */
  #events: WriteStream | undefined;
  #eventsError: Error | undefined;

  private constructor(dir: string) {
    this.dir = dir;
    this.#log = createWriteStream(join(dir, EPISODE_FILES.log), { flags: 'w' });
    this.#log.on('error', (err) => {
      this.#logError = err;
    });
  }

  static async open(runDir: string, index: number): Promise<EpisodeWriter> {
    return new EpisodeWriter(await ensureEpisodeDir(runDir, index));
  }

  logFiring(entry: FiringLogEntry): void {
    if (this.#closed || this.#logError) return;
    const line = JSON.stringify(entry) + '\n';
    this.#buffered.push(line);
    this.#bufferedBytes += line.length;
    if (this.#bufferedBytes >= LOG_FLUSH_BYTES) this.#flush();
  }

  /** Appends one event line; written in the order given (the executor's firing order). */
  logEvent(event: EpisodeEvent): void {
    if (this.#closed || this.#eventsError) return;
    if (!this.#events) {
      this.#events = createWriteStream(join(this.dir, EPISODE_FILES.events), { flags: 'w' });
      this.#events.on('error', (err) => {
        this.#eventsError = err;
      });
    }
    this.#events.write(JSON.stringify(event) + '\n');
  }

  // One write per ~64 KB instead of one per firing: each write is a syscall, and a step fires several nodes.
  #flush(): void {
    if (this.#buffered.length === 0) return;
    this.#log.write(this.#buffered.join(''));
    this.#buffered = [];
    this.#bufferedBytes = 0;
  }

  /** Starts writing the asset's file; the returned promise settles when it is on disk (never rejects). */
  writeAsset(asset: AssetFile): Promise<void> {
    const path = join(this.dir, EPISODE_FILES.assets, safeAssetName(asset.name));
    const write = writeFile(path, asset.data);
    this.#pending.push(write);
    return write.catch(() => {});
  }

  /** Flushes the log and the assets, then writes episode.json. Idempotent. */
  finish(record: EpisodeRecord): Promise<void> {
    this.#closed ??= (async () => {
      this.#flush();
      await new Promise<void>((resolve) => this.#log.end(resolve));
      const events = this.#events;
      if (events) await new Promise<void>((resolve) => events.end(resolve));
      const results = await Promise.allSettled(this.#pending);
      await writeJsonAtomic(join(this.dir, EPISODE_FILES.record), record);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      if (this.#logError) throw this.#logError;
      if (this.#eventsError) throw this.#eventsError;
    })();
    return this.#closed;
  }
}
