/**
 * One pass over a dataset folder's records, in order, checking each as it goes (fields, ids
 * unique per split, labels), handing every sample to the caller: loadDataset keeps them all,
 * the dataset index (dataset-index.ts) keeps only counts, clusters and the first few.
 */
import { extname, join } from 'node:path';
import { DatasetInvalidError } from './dataset-invalid-error.js';
import { readDatasetManifest } from './dataset-manifest.js';
import type { PositionUnit } from './raw-record.js';
import { recordsOf } from './read-records.js';
import { sampleOf } from './sample-of.js';
import type { Dataset, Sample } from './types.js';

export const MANIFEST_FILE = 'dataset.json';
export const DATA_EXTENSIONS = ['.jsonl', '.json', '.csv', '.parquet'] as const;

/** What a dataset is besides its samples. */
export type DatasetHead = Pick<Dataset, 'description' | 'labels' | 'splitNames' | 'defaultSplit'>;

/** Reads every record of `files` (in that order) in `dir`; DATASET_INVALID naming the file, line and field at the first bad one. */
export async function scanDataset(
  dir: string,
  files: readonly string[],
  onSample: (split: string, sample: Sample) => void,
): Promise<DatasetHead> {
  const manifest = await readDatasetManifest(join(dir, MANIFEST_FILE));
  if (files.length === 0) throw new DatasetInvalidError({ file: dir }, `holds no data files (${DATA_EXTENSIONS.join(', ')})`);
  const splitNames: string[] = [];
  // Where each id was first seen, packed as file × 2³² + line: one number per sample, not an object, for large datasets.
  const seen = new Map<string, number>();
  const labelSet = Array.isArray(manifest.labels) ? new Set(manifest.labels) : undefined;
  const targets = manifest.labels === true ? new Set<string>() : undefined;
  for (const [fileIndex, f] of files.entries()) {
    const file = join(dir, f);
    const ext = extname(f).toLowerCase();
    const unit: PositionUnit = ext === '.parquet' ? 'row' : 'line';
    const fileSplit = f.slice(0, f.length - ext.length);
    for await (const raw of recordsOf(file, ext)) {
      const { sample, split: own } = sampleOf(raw, { file, unit, ...(manifest.fields ? { fields: manifest.fields } : {}) });
      const split = own ?? fileSplit;
      const at = { file, line: raw.line, unit };
      const key = `${split}\u0000${sample.id}`;
      const first = seen.get(key);
      if (first !== undefined) {
        const firstAt = `${join(dir, files[Math.floor(first / 2 ** 32)]!)}:${first % 2 ** 32}`;
        throw new DatasetInvalidError(
          { ...at, field: 'id' },
          `id ${JSON.stringify(sample.id)} is already used in split "${split}" by ${firstAt}${
            sample.id.length === 16 ? ' (an id made from the content: the two records are the same; give them ids)' : ''
          }`,
        );
      }
      seen.set(key, fileIndex * 2 ** 32 + raw.line);
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
      targets?.add(sample.target as string);
      if (!splitNames.includes(split)) splitNames.push(split);
      onSample(split, sample);
    }
  }
  if (splitNames.length === 0) throw new DatasetInvalidError({ file: dir }, 'holds no samples');
  const labels = manifest.labels === true ? [...(targets ?? [])].sort() : manifest.labels;
  if (manifest.defaultSplit !== undefined && !splitNames.includes(manifest.defaultSplit)) {
    throw new DatasetInvalidError(
      { file: join(dir, MANIFEST_FILE), field: 'defaultSplit' },
      `split "${manifest.defaultSplit}" has no samples; splits: ${splitNames.join(', ')}`,
    );
  }
  return {
    ...(manifest.description !== undefined ? { description: manifest.description } : {}),
    ...(labels ? { labels } : {}),
    splitNames,
    defaultSplit: manifest.defaultSplit ?? (splitNames.includes('test') ? 'test' : splitNames[0]!),
  };
}
