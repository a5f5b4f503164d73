/**
 * What the server's API needs of a dataset without holding its samples: per split the sample
 * count, the distinct clusters and the first samples (the preview). Built in one streamed pass
 * (scan-dataset.ts) that keeps no more than that, so a dataset of hundreds of MB costs the
 * server its index, not its rows; samples further on are read again when asked for.
 */
import { datasetStamp } from './load-dataset.js';
import { scanDataset, type DatasetHead } from './scan-dataset.js';
import type { DatasetSource, Sample } from './types.js';

/** Samples of each split kept in the index: a preview beyond them reads the files again. */
export const INDEX_HEAD_SAMPLES = 100;

export interface SplitIndex {
  sampleCount: number;
  /** The distinct `metadata.cluster` values, sorted. */
  clusters: string[];
  /** The first samples, in episode order (at most INDEX_HEAD_SAMPLES). */
  head: Sample[];
}

export interface DatasetIndex extends DatasetHead {
  name: string;
  source: DatasetSource;
  dir: string;
  splits: Record<string, SplitIndex>;
}

/** Reads the folder once and keeps its index; DATASET_INVALID naming the file, line and field when a record is bad. */
export async function indexDataset(dir: string, name: string, source: DatasetSource): Promise<DatasetIndex> {
  const { files } = await datasetStamp(dir, name, source);
  // No prototype: a split named "constructor" or "__proto__" is an ordinary split.
  const splits = Object.create(null) as Record<string, { sampleCount: number; clusters: Set<string>; head: Sample[] }>;
  const head = await scanDataset(dir, files, (split, sample) => {
    let s = splits[split];
    if (!s) {
      s = { sampleCount: 0, clusters: new Set(), head: [] };
      splits[split] = s;
    }
    s.sampleCount += 1;
    if (sample.metadata.cluster !== undefined) s.clusters.add(String(sample.metadata.cluster));
    if (s.head.length < INDEX_HEAD_SAMPLES) s.head.push(sample);
  });
  const out = Object.create(null) as Record<string, SplitIndex>;
  for (const [k, s] of Object.entries(splits)) out[k] = { sampleCount: s.sampleCount, clusters: [...s.clusters].sort(), head: s.head };
  return { name, source, dir, ...head, splits: out };
}

/** Samples `offset … offset+count-1` of a split (fewer at its end), read from the files in one pass that keeps only those. */
export async function readSplitSamples(
  dir: string,
  name: string,
  source: DatasetSource,
  split: string,
  offset: number,
  count: number,
): Promise<Sample[]> {
  const { files } = await datasetStamp(dir, name, source);
  const out: Sample[] = [];
  let at = 0;
  await scanDataset(dir, files, (s, sample) => {
    if (s !== split) return;
    if (at >= offset && at < offset + count) out.push(sample);
    at += 1;
  });
  return out;
}
