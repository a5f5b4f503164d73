/**
 * Reads one dataset folder into samples per split. Each data file (`.jsonl`, `.json`, `.csv`,
 * `.parquet`; files sorted by name) is a split named after the file, except for records with a
 * `split` field, which go to that split. Parsed datasets are cached in memory by folder, keyed
 * by every file's mtime and size, so an edited file is read again.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { DatasetInvalidError } from './dataset-invalid-error.js';
import { readDatasetManifest } from './dataset-manifest.js';
import type { PositionUnit, RawRecord } from './raw-record.js';
import { readJsonArray } from './read-json-array.js';
import { readJsonl } from './read-jsonl.js';
import { sampleOf } from './sample-of.js';
import type { Dataset, DatasetSource, Sample } from './types.js';

export const MANIFEST_FILE = 'dataset.json';
export const DATA_EXTENSIONS = ['.jsonl', '.json', '.csv', '.parquet'] as const;

const cache = new Map<string, { stamp: string; dataset: Promise<Dataset> }>();

/** The data files of a folder, sorted by name (dataset.json excluded). */
export async function dataFiles(dir: string): Promise<string[]> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isFile() && e.name !== MANIFEST_FILE && (DATA_EXTENSIONS as readonly string[]).includes(extname(e.name).toLowerCase()))
    .map((e) => e.name)
    .sort();
  return names;
}

export async function loadDataset(dir: string, name: string, source: DatasetSource): Promise<Dataset> {
  const files = await dataFiles(dir);
  const stamps = await Promise.all(
    [MANIFEST_FILE, ...files].map(async (f) => {
      const s = await stat(join(dir, f)).catch(() => undefined);
      return s ? `${f}:${s.mtimeMs}:${s.size}` : `${f}:-`;
    }),
  );
  const stamp = `${name}|${source}|${stamps.join('|')}`;
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
  const manifest = await readDatasetManifest(join(dir, MANIFEST_FILE));
  if (files.length === 0) throw new DatasetInvalidError({ file: dir }, `holds no data files (${DATA_EXTENSIONS.join(', ')})`);
  // No prototype: a split named "constructor" or "__proto__" is an ordinary split, and a name no file gave finds nothing.
  const splits: Record<string, Sample[]> = Object.create(null) as Record<string, Sample[]>;
  const splitNames: string[] = [];
  const seen = new Map<string, { file: string; line: number }>();
  const labelSet = Array.isArray(manifest.labels) ? new Set(manifest.labels) : undefined;
  for (const f of files) {
    const file = join(dir, f);
    const ext = extname(f).toLowerCase();
    const unit: PositionUnit = ext === '.parquet' ? 'row' : 'line';
    const fileSplit = f.slice(0, f.length - ext.length);
    for (const raw of await readRecords(file, ext)) {
      const { sample, split: own } = sampleOf(raw, { file, unit, ...(manifest.fields ? { fields: manifest.fields } : {}) });
      const split = own ?? fileSplit;
      const at = { file, line: raw.line, unit };
      const key = `${split}\u0000${sample.id}`;
      const first = seen.get(key);
      if (first) {
        throw new DatasetInvalidError(
          { ...at, field: 'id' },
          `id ${JSON.stringify(sample.id)} is already used in split "${split}" by ${first.file}:${first.line}${
            sample.id.length === 16 ? ' (an id made from the content: the two records are the same; give them ids)' : ''
          }`,
        );
      }
      seen.set(key, { file, line: raw.line });
      if (manifest.labels !== undefined && typeof sample.target !== 'string') {
        throw new DatasetInvalidError(
          { ...at, field: 'target' },
          `must be a label (a string) in a dataset with labels, got ${JSON.stringify(sample.target)}`,
        );
      }
      if (labelSet && !labelSet.has(sample.target as string)) {
        throw new DatasetInvalidError(
          { ...at, field: 'target' },
          `${JSON.stringify(sample.target)} is not one of the labels ${[...labelSet].join(', ')}`,
        );
      }
      if (!splits[split]) {
        splits[split] = [];
        splitNames.push(split);
      }
      splits[split].push(sample);
    }
  }
  if (splitNames.length === 0) throw new DatasetInvalidError({ file: dir }, 'holds no samples');
  const labels =
    manifest.labels === true
      ? [...new Set(Object.values(splits).flatMap((s) => s.map((x) => x.target as string)))].sort()
      : manifest.labels;
  if (manifest.defaultSplit !== undefined && !splits[manifest.defaultSplit]) {
    throw new DatasetInvalidError(
      { file: join(dir, MANIFEST_FILE), field: 'defaultSplit' },
      `split "${manifest.defaultSplit}" has no samples; splits: ${splitNames.join(', ')}`,
    );
  }
  return {
    name,
    source,
    dir,
    ...(manifest.description !== undefined ? { description: manifest.description } : {}),
    ...(labels ? { labels } : {}),
    splitNames,
    splits,
    defaultSplit: manifest.defaultSplit ?? (splits.test ? 'test' : splitNames[0]!),
  };
}

// The Parquet and CSV readers are imported for the first file of their kind: every command that lists graphs or datasets would otherwise load their libraries.
async function readRecords(file: string, ext: string): Promise<RawRecord[]> {
  if (ext === '.parquet') return (await import('./read-parquet.js')).readParquet(file);
  const text = await readFile(file, 'utf8');
  if (ext === '.jsonl') return readJsonl(file, text);
  if (ext === '.json') return readJsonArray(file, text);
  return (await import('./read-csv.js')).readCsv(file, text);
}
