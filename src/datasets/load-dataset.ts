/**
 * Reads one dataset folder into samples per split. Each data file (`.jsonl`, `.json`, `.csv`,
 * `.parquet`; files sorted by name) is a split named after the file, except for records with a
 * `split` field, which go to that split. Parsed datasets are cached in memory by folder, keyed
 * by every file's mtime and size, so an edited file is read again.
 */
import { readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { DATA_EXTENSIONS, MANIFEST_FILE, scanDataset } from './scan-dataset.js';
import type { Dataset, DatasetSource, Sample } from './types.js';

export { DATA_EXTENSIONS, MANIFEST_FILE } from './scan-dataset.js';

const cache = new Map<string, { stamp: string; dataset: Promise<Dataset> }>();

/** The data files of a folder, sorted by name (dataset.json excluded). */
export async function dataFiles(dir: string): Promise<string[]> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isFile() && e.name !== MANIFEST_FILE && (DATA_EXTENSIONS as readonly string[]).includes(extname(e.name).toLowerCase()))
    .map((e) => e.name)
    .sort();
  return names;
}

/** The folder's data files and a key that changes when any of them (or dataset.json) does: name, mtime and size of each. */
export async function datasetStamp(dir: string, name: string, source: DatasetSource): Promise<{ files: string[]; stamp: string }> {
  const files = await dataFiles(dir);
  const stamps = await Promise.all(
    [MANIFEST_FILE, ...files].map(async (f) => {
      const s = await stat(join(dir, f)).catch(() => undefined);
      return s ? `${f}:${s.mtimeMs}:${s.size}` : `${f}:-`;
    }),
  );
  return { files, stamp: `${name}|${source}|${stamps.join('|')}` };
}

export async function loadDataset(dir: string, name: string, source: DatasetSource): Promise<Dataset> {
  const { files, stamp } = await datasetStamp(dir, name, source);
  const hit = cache.get(dir);
  if (hit && hit.stamp === stamp) return hit.dataset;
  const dataset = readDataset(dir, name, source, files);
  cache.set(dir, { stamp, dataset });
  // A failed read is not kept: the next call reads again (the user may be fixing the file).
  dataset.catch(() => {
    if (cache.get(dir)?.dataset === dataset) cache.delete(dir);
  });
  return dataset;
}

async function readDataset(dir: string, name: string, source: DatasetSource, files: string[]): Promise<Dataset> {
  // No prototype: a split named "constructor" or "__proto__" is an ordinary split, and a name no file gave finds nothing.
  const splits: Record<string, Sample[]> = Object.create(null) as Record<string, Sample[]>;
  const head = await scanDataset(dir, files, (split, sample) => {
    const samples = splits[split];
    if (samples) samples.push(sample);
    else splits[split] = [sample];
  });
  return { name, source, dir, ...head, splits };
}
