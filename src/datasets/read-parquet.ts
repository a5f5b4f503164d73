/** Parquet (hyparquet): one record per row; 64-bit integers become numbers, JSON-object `metadata` strings are parsed. */
import { readFile } from 'node:fs/promises';
import { parquetMetadata, parquetReadObjects, parquetSchema, type FileMetaData } from 'hyparquet';
import { DatasetInvalidError } from './dataset-invalid-error.js';
import type { RawRecord } from './raw-record.js';

export async function readParquet(file: string): Promise<RawRecord[]> {
  const buf = await readFile(file);
  const arrayBuffer = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  let rows: Record<string, unknown>[];
  try {
    const metadata = parquetMetadata(arrayBuffer);
    assertChunksInSchema(metadata);
    rows = await parquetReadObjects({ file: arrayBuffer, metadata });
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

/**
 * Every column chunk names a column of the schema. hyparquet starts reading each chunk before it
 * looks up the next one's column: a chunk naming none throws there, and the reads already started
 * then fail with nobody awaiting them (unhandled rejections, which end the process).
 */
function assertChunksInSchema(metadata: FileMetaData): void {
  const root = parquetSchema(metadata);
  for (const group of metadata.row_groups) {
    for (const chunk of group.columns) {
      const path = chunk.meta_data?.path_in_schema ?? [];
      let node = root;
      for (const part of path) {
        const child = node.children.find((c) => c.element.name === part);
        if (!child) throw new Error(`a column chunk names "${path.join('.')}", which the schema does not have`);
        node = child;
      }
    }
  }
}
