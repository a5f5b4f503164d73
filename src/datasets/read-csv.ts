/**
 * CSV with a header row (csv-parse). Every cell is a string; `choices`, `target` and `input`
 * cells that are a whole JSON array are parsed (any other cell, even one starting with `[`, is
 * text), a `metadata` cell starting with `{` or `[` must be JSON, and `choices` may also be
 * `|`-separated. Empty cells are absent.
 */
import { parse } from 'csv-parse/sync';
import { DatasetInvalidError } from './dataset-invalid-error.js';
import type { RawRecord } from './raw-record.js';

const JSON_COLUMNS = new Set(['input', 'target', 'choices', 'metadata']);

export function readCsv(file: string, text: string): RawRecord[] {
  let rows: Array<{ record: Record<string, string>; info: { lines: number } }>;
  // A column named twice would silently keep only its last cell.
  const columns = (header: string[]): string[] => {
    const twice = header.find((c, i) => header.indexOf(c) !== i);
    if (twice !== undefined) throw new DatasetInvalidError({ file, line: 1 }, `the header names column "${twice}" twice`);
    // The CSV parser assigns each cell to its column's key: this one would set the record's prototype, and its cells be lost.
    if (header.includes('__proto__'))
      throw new DatasetInvalidError({ file, line: 1 }, 'the header names a column "__proto__", which cannot be a field');
    return header;
  };
  try {
    rows = parse(text, { columns, bom: true, skip_empty_lines: true, info: true }) as typeof rows;
  } catch (err) {
    if (err instanceof DatasetInvalidError) throw err;
    const e = err as { lines?: unknown; code?: unknown; bytes_records?: unknown };
    // csv-parse reports an unclosed quote at the end of the file; the line to fix is the one where the record holding it began.
    if (e.code === 'CSV_QUOTE_NOT_CLOSED' && typeof e.bytes_records === 'number') {
      const line = lineAtByte(text, e.bytes_records);
      throw new DatasetInvalidError({ file, line }, `not valid CSV (a quoted cell in the record that starts on this line is never closed)`);
    }
    const line = e.lines;
    throw new DatasetInvalidError({ file, ...(typeof line === 'number' ? { line } : {}) }, `not valid CSV (${(err as Error).message})`);
  }
  return rows.map(({ record, info }) => {
    const value: Record<string, unknown> = {};
    for (const [column, cell] of Object.entries(record)) {
      if (cell === '') continue;
      value[column] = JSON_COLUMNS.has(column) ? cellValue(file, info.lines, column, cell) : cell;
    }
    return { value, line: info.lines };
  });
}

/** The 1-based line of the UTF-8 byte offset `byte` in `text`. */
function lineAtByte(text: string, byte: number): number {
  const before = Buffer.from(text, 'utf8').subarray(0, byte);
  let line = 1;
  for (const b of before) if (b === 0x0a) line++;
  return line;
}

function cellValue(file: string, line: number, column: string, cell: string): unknown {
  const t = cell.trim();
  if (column === 'metadata' && (t.startsWith('{') || t.startsWith('['))) {
    try {
      return JSON.parse(t);
    } catch (err) {
      throw new DatasetInvalidError({ file, line, field: column }, `cell starts like JSON but is not (${(err as Error).message})`);
    }
  }
  // Text often starts with a bracket ("[1, 2, 3] What is the sum?"): only a cell that parses whole is JSON.
  if (t.startsWith('[')) {
    try {
      return JSON.parse(t);
    } catch {}
  }
  if (column === 'choices') return cell.split('|').map((c) => c.trim());
  return cell;
}
