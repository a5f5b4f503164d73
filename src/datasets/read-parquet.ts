/** Parquet (hyparquet): one record per row; 64-bit integers become numbers, JSON-object `metadata` strings are parsed. */
import { readFile } from 'node:fs/promises';
import { parquetReadObjects } from 'hyparquet';
import { DatasetInvalidError } from './dataset-invalid-error.js';
import type { RawRecord } from './raw-record.js';

export async function readParquet(file: string): Promise<RawRecord[]> {
  const buf = await readFile(file);
  const arrayBuffer = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  let rows: Record<string, unknown>[];
  try {
    rows = await parquetReadObjects({ file: arrayBuffer });
  } catch (err) {
    throw new DatasetInvalidError({ file }, `not a readable Parquet file (${(err as Error).message})`);
  }
  return rows.map((row, i) => {
    const value: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(row)) {
      if (v === null || v === undefined) continue;
      const plain = plainValue(v);
      value[k] = k === 'metadata' && typeof plain === 'string' && plain.trim().startsWith('{') ? parseJson(file, i + 1, plain) : plain;
    }
    return { value, line: i + 1 };
  });
}

function plainValue(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plainValue);
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object' && v !== null && !(v instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plainValue(x)]));
  }
  return v;
}

function parseJson(file: string, row: number, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new DatasetInvalidError({ file, line: row, unit: 'row', field: 'metadata' }, `not valid JSON (${(err as Error).message})`);
  }
}
