/**
 * A run's episode records, `records.jsonl`: one record per line (JSON, the record's own key
 * order), appended as episodes finish; a later line for the same index replaces an earlier one (a
 * retry's play, a record put back). summary.json holds only the run's state and aggregates.
 *
 * Readers go through an index (episode index → the byte range of its latest line), built by one
 * scan of the file and kept per file (inode, size): a file that only grew is scanned from where
 * the last scan stopped, so a run being followed is never scanned twice. Records are then read in
 * index order one batch at a time (`readRecords`), a page at a time (`readRecordsPage`) or one by
 * one (`readRecord`); none of these holds more than a batch of records.
 */
import { existsSync, readFileSync } from 'node:fs';
import { open, stat, truncate, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { FILES } from './run-files.js';
import { episodeRecordSchema } from './summary-schema.js';
import type { EpisodeRecord } from './types.js';

/** A record's line in records.jsonl. */
export const recordLine = (record: EpisodeRecord): string => `${JSON.stringify(record)}\n`;

export const recordsPath = (runDir: string): string => join(runDir, FILES.records);

export const hasRecordsFile = (runDir: string): boolean => existsSync(recordsPath(runDir));

/** Where each index's latest line lies in one version of records.jsonl. */
export interface RecordsIndex {
  /** Index → [byte offset, byte length, ending] of its latest complete line. */
  readonly lines: ReadonlyMap<number, readonly [number, number, string]>;
  /** The indices, ascending. */
  readonly indices: readonly number[];
  /** Bytes of the file covered: up to the end of its last complete line. */
  readonly scanned: number;
}

interface CachedIndex {
  ino: number;
  lines: Map<number, [number, number, string]>;
  sorted: number[] | undefined;
  scanned: number;
}

/** Indices by file path; the last few files read are kept. */
const cache = new Map<string, CachedIndex>();
const CACHED_FILES = 32;
const SCAN_CHUNK = 1 << 20;
/**
 * The canonical key order puts `index` first and `status` third: most lines need no parse to be
 * indexed. A quote inside a JSON string is escaped, so the first `"status":"` is the key's.
 */
const INDEX_PREFIX = /^\{"index":(\d{1,9}),/;
const STATUS_KEY = /"status":"([A-Z_]{1,40})"/;
/** How far into a line its status is looked for before the line is parsed instead. */
const HEAD_BYTES = 512;

function keyOfLine(buf: Buffer, start: number, end: number): { index: number; status: string } | undefined {
  const head = buf.toString('latin1', start, Math.min(end, start + HEAD_BYTES));
  const index = INDEX_PREFIX.exec(head);
  const status = STATUS_KEY.exec(head);
  if (index && status) return { index: Number(index[1]), status: status[1]! };
  try {
    const r = JSON.parse(buf.toString('utf8', start, end)) as { index?: unknown; status?: unknown } | null;
    const i = r?.index;
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0) return undefined;
    return { index: i, status: typeof r?.status === 'string' ? r.status : '' };
  } catch {
    // A line that is not JSON (torn by a crash, edited): not a record.
    return undefined;
  }
}

/** Scans `fh` from `from` to `size`, adding each complete line; returns the end of the last complete line. */
async function scan(fh: FileHandle, lines: Map<number, [number, number, string]>, from: number, size: number): Promise<number> {
  let pos = from;
  let carry: Buffer = Buffer.alloc(0);
  let carryAt = from;
  while (pos < size) {
    const chunk = Buffer.allocUnsafe(Math.min(SCAN_CHUNK, size - pos));
    const { bytesRead } = await fh.read(chunk, 0, chunk.length, pos);
    if (bytesRead === 0) break;
    pos += bytesRead;
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      if (nl > start) {
        const key = keyOfLine(buf, start, nl);
        if (key !== undefined) lines.set(key.index, [carryAt + start, nl - start, key.status]);
      }
      start = nl + 1;
    }
    carry = Buffer.from(buf.subarray(start));
    carryAt += start;
  }
  return carryAt;
}

/** The index of the run's records.jsonl as it is now; null when the run has none. */
export async function recordsIndex(runDir: string): Promise<RecordsIndex | null> {
  const path = recordsPath(runDir);
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const st = await fh.stat();
    let c = cache.get(path);
    // Another file at the path (replaced, rewritten), or one that shrank: scanned anew.
    if (!c || c.ino !== st.ino || st.size < c.scanned) c = { ino: st.ino, lines: new Map(), sorted: undefined, scanned: 0 };
    if (st.size > c.scanned) {
      const before = c.lines.size;
      const scanned = await scan(fh, c.lines, c.scanned, st.size);
      if (scanned !== c.scanned || c.lines.size !== before) c.sorted = undefined;
      c.scanned = scanned;
    }
    cache.delete(path);
    cache.set(path, c);
    if (cache.size > CACHED_FILES) cache.delete(cache.keys().next().value!);
    c.sorted ??= [...c.lines.keys()].sort((a, b) => a - b);
    return { lines: c.lines, indices: c.sorted, scanned: c.scanned };
  } finally {
    await fh.close();
  }
}

/** A line parsed and checked as a record; undefined when it is not one. */
function parseRecordLine(text: string): (EpisodeRecord & Record<string, unknown>) | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  // Fields this version does not know are kept: the record is handed out as the file holds it.
  return episodeRecordSchema.safeParse(raw).success ? (raw as EpisodeRecord & Record<string, unknown>) : undefined;
}

async function readLines(
  fh: FileHandle,
  index: RecordsIndex,
  indices: readonly number[],
): Promise<Array<EpisodeRecord & Record<string, unknown>>> {
  const texts = await Promise.all(
    indices.map(async (i) => {
      const [offset, length] = index.lines.get(i)!;
      const buf = Buffer.allocUnsafe(length);
      const { bytesRead } = await fh.read(buf, 0, length, offset);
      return buf.toString('utf8', 0, bytesRead);
    }),
  );
  const out: Array<EpisodeRecord & Record<string, unknown>> = [];
  for (const text of texts) {
    const r = parseRecordLine(text);
    if (r) out.push(r);
  }
  return out;
}

/** Records read together while streaming. */
const READ_BATCH = 64;

/**
 * The run's records in index order, one batch read at a time; nothing when the run has no
 * records.jsonl. A line that is not a valid record is left out.
 */
export async function* readRecords(runDir: string, signal?: AbortSignal): AsyncGenerator<EpisodeRecord & Record<string, unknown>> {
  const index = await recordsIndex(runDir);
  if (!index || index.indices.length === 0) return;
  const fh = await open(recordsPath(runDir), 'r');
  try {
    for (let at = 0; at < index.indices.length; at += READ_BATCH) {
      signal?.throwIfAborted();
      yield* await readLines(fh, index, index.indices.slice(at, at + READ_BATCH));
    }
  } finally {
    await fh.close();
  }
}

/** Every record, in index order (for callers that need the whole list); [] without records.jsonl. */
export async function readAllRecords(runDir: string): Promise<EpisodeRecord[]> {
  const out: EpisodeRecord[] = [];
  for await (const r of readRecords(runDir)) out.push(r);
  return out;
}

/** One page of records in index order. */
export interface RecordsPage {
  items: EpisodeRecord[];
  /** Records on all pages (those with the ending asked for). */
  total: number;
}

/**
 * Records `offset … offset+limit-1` in index order, only those that ended `status` when given:
 * the index knows each line's ending, so only the page's lines are read.
 */
export async function readRecordsPage(runDir: string, offset: number, limit: number, status?: string): Promise<RecordsPage | null> {
  const index = await recordsIndex(runDir);
  if (!index) return null;
  const matching = status === undefined ? index.indices : index.indices.filter((i) => index.lines.get(i)![2] === status);
  const wanted = matching.slice(offset, offset + limit);
  if (wanted.length === 0) return { items: [], total: matching.length };
  const fh = await open(recordsPath(runDir), 'r');
  try {
    return { items: await readLines(fh, index, wanted), total: matching.length };
  } finally {
    await fh.close();
  }
}

/** The latest record of episode `index`; null when records.jsonl has none (or no file). */
export async function readRecord(runDir: string, index: number): Promise<EpisodeRecord | null> {
  const idx = await recordsIndex(runDir);
  if (!idx?.lines.has(index)) return null;
  const fh = await open(recordsPath(runDir), 'r');
  try {
    return (await readLines(fh, idx, [index]))[0] ?? null;
  } finally {
    await fh.close();
  }
}

/** records.jsonl read whole at once, latest line per index, in index order (sync: for the few sync readers). */
export function readAllRecordsSync(runDir: string): EpisodeRecord[] | null {
  let text: string;
  try {
    text = readFileSync(recordsPath(runDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const byIndex = new Map<number, EpisodeRecord>();
  const end = text.lastIndexOf('\n');
  for (const line of text.slice(0, end + 1).split('\n')) {
    const r = line ? parseRecordLine(line) : undefined;
    if (r) byIndex.set(r.index, r);
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

/**
 * The complete lines appended to records.jsonl past byte `from`, as records in file order, and
 * where the next read starts (a line still being written is left for then). A file that is
 * shorter than `from`, or another file than `ino`, was replaced: `restart` is then true and the
 * records are the whole file's.
 */
export async function tailRecords(
  runDir: string,
  from: number,
  ino?: number,
): Promise<{ records: Array<EpisodeRecord & Record<string, unknown>>; next: number; restart: boolean; ino: number } | null> {
  let fh: FileHandle;
  try {
    fh = await open(recordsPath(runDir), 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const { size, ino: now } = await fh.stat();
    const restart = size < from || (ino !== undefined && ino !== now);
    let pos = restart ? 0 : from;
    const records: Array<EpisodeRecord & Record<string, unknown>> = [];
    let carry = '';
    let next = pos;
    while (pos < size) {
      const chunk = Buffer.allocUnsafe(Math.min(SCAN_CHUNK, size - pos));
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      // Whole lines only: a multi-byte character split across chunks is joined before decoding.
      const last = chunk.lastIndexOf(10, bytesRead - 1);
      if (last < 0) {
        carry += chunk.toString('latin1', 0, bytesRead);
        continue;
      }
      const text = Buffer.concat([Buffer.from(carry, 'latin1'), chunk.subarray(0, last + 1)]).toString('utf8');
      carry = chunk.toString('latin1', last + 1, bytesRead);
      next = pos - (bytesRead - last - 1);
      for (const line of text.split('\n')) {
        const r = line ? parseRecordLine(line) : undefined;
        if (r) records.push(r);
      }
    }
    return { records, next, restart, ino: now };
  } finally {
    await fh.close();
  }
}

/**
 * Appends records (as given) to records.jsonl, one write. A line left torn by a crash is cut
 * off first, so the new lines start on a line of their own.
 */
export async function appendRecords(runDir: string, records: readonly EpisodeRecord[]): Promise<void> {
  if (records.length === 0) return;
  const path = recordsPath(runDir);
  await cutTornLine(path);
  const fh = await open(path, 'a');
  try {
    await fh.write(records.map(recordLine).join(''));
  } finally {
    await fh.close();
  }
}

/** Writes records.jsonl afresh with exactly `records` (atomic): for a run nobody is playing (a retry being prepared). */
export async function replaceRecords(runDir: string, records: readonly EpisodeRecord[]): Promise<void> {
  await writeFileAtomic(recordsPath(runDir), records.map(recordLine).join(''));
}

/** Cuts a last line that lacks its newline (a write cut short); no file is fine. */
export async function cutTornLine(path: string): Promise<void> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  let cut: number | undefined;
  try {
    const { size } = await fh.stat();
    if (size === 0) return;
    const tail = Buffer.alloc(Math.min(size, SCAN_CHUNK));
    let end = size;
    for (;;) {
      const from = Math.max(0, end - tail.length);
      const { bytesRead } = await fh.read(tail, 0, end - from, from);
      if (end === size && tail[bytesRead - 1] === 10) return;
      const nl = tail.subarray(0, bytesRead).lastIndexOf(10);
      if (nl >= 0) {
        cut = from + nl + 1;
        break;
      }
      if (from === 0) {
        cut = 0;
        break;
      }
      end = from;
    }
  } finally {
    await fh.close();
  }
  await truncate(path, cut);
}

/**
 * Appends `records` that records.jsonl lacks or holds otherwise (compared by their line's
 * text), so writing back a summary read from the run appends nothing.
 */
export async function appendChangedRecords(runDir: string, records: readonly EpisodeRecord[]): Promise<void> {
  if (records.length === 0) return;
  const index = await recordsIndex(runDir);
  if (!index) {
    await appendRecords(runDir, records);
    return;
  }
  const changed: EpisodeRecord[] = [];
  const fh = await open(recordsPath(runDir), 'r');
  try {
    for (let at = 0; at < records.length; at += READ_BATCH) {
      const batch = records.slice(at, at + READ_BATCH);
      const texts = await Promise.all(
        batch.map(async (r) => {
          const where = index.lines.get(r.index);
          if (!where) return undefined;
          const buf = Buffer.allocUnsafe(where[1]);
          const { bytesRead } = await fh.read(buf, 0, where[1], where[0]);
          return buf.toString('utf8', 0, bytesRead);
        }),
      );
      batch.forEach((r, i) => {
        if (texts[i] !== recordLine(r).slice(0, -1)) changed.push(r);
      });
    }
  } finally {
    await fh.close();
  }
  await appendRecords(runDir, changed);
}

/** Size of records.jsonl in bytes; 0 without one. */
export async function recordsFileSize(runDir: string): Promise<number> {
  return (await stat(recordsPath(runDir)).catch(() => null))?.size ?? 0;
}
