/**
 * The raw records of one data file, one at a time. JSON Lines is streamed (64 KiB at a time), so
 * a large file is never held whole; a JSON array, CSV and Parquet file is read whole, as its parser needs.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { DatasetInvalidError } from './dataset-invalid-error.js';
import type { RawRecord } from './raw-record.js';
import { readJsonArray } from './read-json-array.js';

/** JSON Lines, streamed: the same records and line numbers as `readJsonl` over the whole text. */
export async function* streamJsonl(file: string): AsyncGenerator<RawRecord> {
  let rest = '';
  let line = 0;
  const one = (text: string): RawRecord | undefined => {
    line += 1;
    const trimmed = text.trim();
    if (trimmed === '') return undefined;
    try {
      return { value: JSON.parse(trimmed), line };
    } catch (err) {
      throw new DatasetInvalidError({ file, line }, `not valid JSON (${(err as Error).message})`);
    }
  };
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 16 })) {
    const parts = (rest + (chunk as string)).split('\n');
    rest = parts.pop()!;
    for (const part of parts) {
      const r = one(part);
      if (r) yield r;
    }
  }
  const last = one(rest);
  if (last) yield last;
}

// The Parquet and CSV readers are imported for the first file of their kind: every command that lists graphs or datasets would otherwise load their libraries.
export async function* recordsOf(file: string, ext: string): AsyncGenerator<RawRecord> {
  if (ext === '.jsonl') {
    yield* streamJsonl(file);
    return;
  }
  if (ext === '.parquet') {
    yield* await (await import('./read-parquet.js')).readParquet(file);
    return;
  }
  const text = await readFile(file, 'utf8');
  if (ext === '.json') yield* readJsonArray(file, text);
  else yield* (await import('./read-csv.js')).readCsv(file, text);
}
