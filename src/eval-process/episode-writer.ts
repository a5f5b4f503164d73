/**
 * Writes one episode's directory, `episodes/epNNNN/`: log.jsonl (this episode's node firings
 * only), events.jsonl (the `$events` its nodes emitted: model calls, retries; only when there are
 * some), assets/ (its files; only when it has some) and episode.json (its record), so the episode
 * can be understood from its own folder alone. Lines are kept in memory and written with the
 * record, each file in one write; a file that grows past 64 KB is streamed from then on.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { EpisodeEvent, FiringLogEntry } from '../core/types.js';
import { writeJsonAtomic } from '../store/atomic.js';
import { episodeDir } from '../store/run-dir.js';
import { injectedFault } from '../store/storage-fault.js';
import type { EpisodeRecord } from '../store/types.js';

export const EPISODE_FILES = { record: 'episode.json', log: 'log.jsonl', events: 'events.jsonl', assets: 'assets' } as const;

const LOG_FLUSH_BYTES = 64 * 1024;

/**
 * Asset bytes this thread may have handed to the disk and not yet seen written before an
 * episode waits for its assets' writes (see `assetWritesBehind`): enough for any frame, small
 * enough that a slow disk cannot fill the memory with an env's renders.
 */
export const ASSET_WRITE_BEHIND_BYTES = 64 * 1024 * 1024;
/** Asset bytes handed to writeFile in this thread and not yet settled (every episode writer of the thread together). */
let assetBytesInFlight = 0;

/** Whether this thread's unwritten asset bytes are past `ASSET_WRITE_BEHIND_BYTES`: the disk is behind, and a step should wait for its asset. */
export function assetWritesBehind(): boolean {
  return assetBytesInFlight > ASSET_WRITE_BEHIND_BYTES;
}

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

/**
 * A JSON-lines file written in one go at `close()`, or streamed once its lines pass 64 KB: most
 * episodes' logs are small, and a stream per file costs an open, a write and a close on the
 * thread pool plus the stream's own machinery.
 */
class JsonlFile {
  readonly #path: string;
  /** Makes the episode's folder (once) and settles when it exists; nothing is opened before. */
  readonly #folder: () => Promise<unknown>;
  #lines: string[] = [];
  #bytes = 0;
  /** The streamed writes so far, in order; null until the file first passes 64 KB. */
  #streamed: Promise<WriteStream> | null = null;
  #error: Error | undefined;

  constructor(path: string, folder: () => Promise<unknown>) {
    this.#path = path;
    this.#folder = folder;
  }

  get failed(): boolean {
    return this.#error !== undefined;
  }

  append(line: string): void {
    this.#lines.push(line);
    this.#bytes += line.length;
    if (this.#bytes >= LOG_FLUSH_BYTES) this.#flush();
  }

  #flush(): void {
    const text = this.#lines.join('');
    this.#lines = [];
    this.#bytes = 0;
    this.#streamed = (this.#streamed ?? this.#open()).then((stream) => {
      stream.write(text);
      return stream;
    });
    this.#streamed.catch((err: Error) => {
      this.#error ??= err;
    });
  }

  async #open(): Promise<WriteStream> {
    await this.#folder();
    const stream = createWriteStream(this.#path, { flags: 'w' });
    stream.on('error', (err) => {
      this.#error ??= err;
    });
    return stream;
  }

  /** Writes what is left and closes; rejects with the first write error. */
  async close(): Promise<void> {
    if (this.#streamed) {
      if (this.#lines.length > 0) this.#flush();
      const stream = await this.#streamed;
      await new Promise<void>((resolve) => stream.end(resolve));
    } else {
      await this.#folder();
      await writeFile(this.#path, this.#lines.join(''));
    }
    this.#lines = [];
    if (this.#error) throw this.#error;
  }
}

/** mkdir that takes a folder already there (an episode played again) as done. */
async function mkdirOnce(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/**
 * The episode's folder, and `episodes/` when the run dir lacks it, but never the run dir itself:
 * a run dir deleted while its run runs must stay deleted (the run ends RUN_DIR_MISSING), not be
 * made again by its last episodes' writes.
 */
async function makeFolder(dir: string): Promise<void> {
  try {
    await mkdirOnce(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdirOnce(dirname(dir));
    await mkdirOnce(dir);
  }
}

export class EpisodeWriter {
  readonly dir: string;
  readonly #log: JsonlFile;
  readonly #pending: Promise<unknown>[] = [];
  #closed: Promise<void> | undefined;
  /** Started at the first event, so episodes of graphs that emit none get no file. */
  #events: JsonlFile | undefined;
  /** Made at the first asset. */
  #assetsDir: Promise<unknown> | undefined;

  /** Made when first needed: a file passing 64 KB, an asset, or finish(). */
  #folder: Promise<unknown> | undefined;

  private constructor(dir: string) {
    this.dir = dir;
    this.#log = new JsonlFile(join(dir, EPISODE_FILES.log), this.#madeFolder);
  }

  /**
   * Settles once the folder exists (rejects when it cannot be made); every file waits for it.
   * Not made when the episode starts: when many workers start together (a run's first round),
   * as many folders made at once compete for the disk and the cores with the episodes' first
   * steps; most episodes first need it at finish(), which runs while the worker's next plays.
   */
  readonly #madeFolder = (): Promise<unknown> => {
    if (!this.#folder) {
      this.#folder = makeFolder(this.dir);
      // Reported by finish(), which every episode reaches.
      this.#folder.catch(() => {});
    }
    return this.#folder;
  };

  /**
   * Returns at once: the episode does not wait for the disk before it plays (its lines are kept
   * in memory meanwhile); finish() reports a folder that could not be made.
   */
  static open(runDir: string, index: number): EpisodeWriter {
    const dir = episodeDir(runDir, index);
    injectedFault(dir);
    return new EpisodeWriter(dir);
  }

  logFiring(entry: FiringLogEntry): void {
    if (this.#closed || this.#log.failed) return;
    this.#log.append(JSON.stringify(entry) + '\n');
  }

  /** Appends one event line; written in the order given (the executor's firing order). */
  logEvent(event: EpisodeEvent): void {
    if (this.#closed) return;
    this.#events ??= new JsonlFile(join(this.dir, EPISODE_FILES.events), this.#madeFolder);
    if (this.#events.failed) return;
    this.#events.append(JSON.stringify(event) + '\n');
  }

  /**
   * Starts writing the asset's file; the returned promise settles when it is on disk (never
   * rejects: finish() reports a write that failed, and writes the record only after every asset).
   */
  writeAsset(asset: AssetFile): Promise<void> {
    const dir = join(this.dir, EPISODE_FILES.assets);
    this.#assetsDir ??= this.#madeFolder().then(() => mkdirOnce(dir));
    const bytes = asset.data.length;
    assetBytesInFlight += bytes;
    const write = this.#assetsDir
      .then(() => writeFile(join(dir, safeAssetName(asset.name)), asset.data))
      .finally(() => {
        assetBytesInFlight -= bytes;
      });
    this.#pending.push(write);
    return write.catch(() => {});
  }

  /** Writes the log, the events and the assets, then episode.json. Idempotent. */
  finish(record: EpisodeRecord): Promise<void> {
    this.#closed ??= (async () => {
      await this.#madeFolder();
      const results = await Promise.allSettled([this.#log.close(), ...(this.#events ? [this.#events.close()] : []), ...this.#pending]);
      await writeJsonAtomic(join(this.dir, EPISODE_FILES.record), record);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    })();
    return this.#closed;
  }
}
