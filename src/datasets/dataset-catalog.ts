/**
 * The datasets a server or run can use: folders under the built-in `datasets/` and under
 * `<workspace>/datasets/`; a workspace folder hides a built-in one of the same name.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { byName } from '../core/by-name.js';
import { NotFoundError } from '../errors.js';
import { BUILTIN_DATASETS_DIR } from '../paths.js';
import { loadDataset } from './load-dataset.js';
import type { Dataset, DatasetSource } from './types.js';

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

  /** The parsed dataset (cached by its files' mtimes); DATASET_INVALID naming the file and line when one is bad. */
  load(name: string): Promise<Dataset> {
    const e = this.entry(name);
    return loadDataset(e.dir, e.name, e.source);
  }
}
