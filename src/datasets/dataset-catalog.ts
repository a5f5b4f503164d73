/**
 * The datasets a server or run can use: folders under the built-in `datasets/` and under
 * `<workspace>/datasets/`; a workspace folder hides a built-in one of the same name.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { byName } from '../core/by-name.js';
import { NotFoundError } from '../errors.js';
import { BUILTIN_DATASETS_DIR } from '../paths.js';
import type { DatasetIndex } from './dataset-index.js';
import { indexInThread, samplesInThread } from './dataset-thread.js';
import { datasetStamp, loadDataset } from './load-dataset.js';
import type { Dataset, DatasetSource, Sample } from './types.js';

export interface DatasetCatalogOptions {
  /** @default the package's `datasets/` */
  builtinDir?: string;
  /** Its `datasets/` folder overlays the built-ins. @default $ACTIVE_WORKSPACE_DIR */
  workspaceDir?: string;
}

export interface DatasetEntry {
  name: string;
  source: DatasetSource;
  dir: string;
}

/** Indexes by folder, keyed like loadDataset's cache (every file's name, mtime and size). */
const indexes = new Map<string, { stamp: string; index: Promise<DatasetIndex> }>();

/** A dataset name is a folder name: letters, digits, `_`, `-`, `.` (no path separators). */
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

export class DatasetCatalog {
  readonly builtinDir: string;
  readonly workspaceDir: string | undefined;

  constructor(options: DatasetCatalogOptions = {}) {
    this.builtinDir = options.builtinDir ?? BUILTIN_DATASETS_DIR;
    const ws = options.workspaceDir ?? process.env.ACTIVE_WORKSPACE_DIR;
    this.workspaceDir = ws ? ws : undefined;
  }

  /** Every dataset folder, sorted by name, the workspace's winning. */
  list(): DatasetEntry[] {
    const found = new Map<string, DatasetEntry>();
    const scan = (root: string, source: DatasetSource) => {
      if (!existsSync(root)) return;
      for (const e of readdirSync(root, { withFileTypes: true })) {
        if (e.isDirectory() && NAME.test(e.name)) found.set(e.name, { name: e.name, source, dir: join(root, e.name) });
      }
    };
    scan(this.builtinDir, 'builtin');
    if (this.workspaceDir) scan(join(this.workspaceDir, 'datasets'), 'workspace');
    return [...found.values()].sort(byName);
  }

  entry(name: string): DatasetEntry {
    const e = NAME.test(name) ? this.list().find((d) => d.name === name) : undefined;
    if (!e)
      throw new NotFoundError(`dataset ${JSON.stringify(name)}`, {
        detail: `known: ${
          this.list()
            .map((d) => d.name)
            .join(', ') || 'none'
        }`,
      });
    return e;
  }

  /**
   * The parsed dataset, every sample in memory (cached by its files' mtimes); DATASET_INVALID
   * naming the file and line when one is bad. For a process that plays the samples: the server
   * answers from `index`.
   */
  load(name: string): Promise<Dataset> {
    const e = this.entry(name);
    return loadDataset(e.dir, e.name, e.source);
  }

  /**
   * Its splits, sample counts, clusters and first samples, read in a worker thread off the
   * caller's event loop and cached by its files' mtimes and sizes; DATASET_INVALID as `load`.
   */
  async index(name: string): Promise<DatasetIndex> {
    const e = this.entry(name);
    const { stamp } = await datasetStamp(e.dir, e.name, e.source);
    const hit = indexes.get(e.dir);
    if (hit && hit.stamp === stamp) return hit.index;
    const index = indexInThread(e);
    indexes.set(e.dir, { stamp, index });
    // A failed read is not kept: the next call reads again (the user may be fixing the file).
    index.catch(() => {
      if (indexes.get(e.dir)?.index === index) indexes.delete(e.dir);
    });
    return index;
  }

  /** Samples `offset … offset+count-1` of a split: from the index's first samples, else read again in a worker thread. */
  async samples(name: string, split: string, offset: number, count: number, signal?: AbortSignal): Promise<Sample[]> {
    const index = await this.index(name);
    const s = index.splits[split];
    if (!s || count === 0 || offset >= s.sampleCount) return [];
    if (offset + Math.min(count, s.sampleCount - offset) <= s.head.length) return s.head.slice(offset, offset + count);
    return samplesInThread(this.entry(name), split, offset, count, signal);
  }
}
