/**
 * A minimal tar writer (POSIX ustar, with a pax header for paths longer than ustar holds):
 * enough to archive a run directory as a stream, without spawning `tar` or a dependency.
 * Entries are regular files and folders only (links and devices are left out), in the order
 * given; each file is read as a stream and written at the size it had when listed (a file
 * that grew is cut there, one that shrank is padded with zeros), so a running run's archive
 * is still a valid tar.
 */
import { createReadStream } from 'node:fs';
import type { Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

const BLOCK = 512;

export interface TarEntry {
  /** Path inside the archive, '/'-separated; folders end without a slash. */
  name: string;
  /** Absolute path on disk; absent for a folder. */
  file?: string;
  size: number;
  mode: number;
  mtimeSec: number;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mode: number, mtimeSec: number, type: '0' | '5' | 'x', prefix = ''): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(mtimeSec, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(type, 156, 'ascii');
  h.write('ustar\0' + '00', 257, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return h;
}

const padding = (size: number): Buffer => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** Splits a path into ustar's prefix (≤155 bytes) and name (≤100 bytes) at a slash, or null when it cannot be. */
function splitUstar(path: string): { prefix: string; name: string } | null {
  if (Buffer.byteLength(path) <= 100) return { prefix: '', name: path };
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name !== '') return { prefix, name };
  }
  return null;
}

/** A pax extended header carrying `path` (each record is "<length> path=<value>\n", the length counting itself). */
function paxPath(path: string, mtimeSec: number): Buffer {
  const body = ` path=${path}\n`;
  const bodyBytes = Buffer.byteLength(body);
  let len = bodyBytes + 1;
  while (len !== bodyBytes + String(len).length) len = bodyBytes + String(len).length;
  const record = Buffer.from(`${len}${body}`);
  return Buffer.concat([header('PaxHeader', record.length, 0o644, mtimeSec, 'x'), record, padding(record.length)]);
}

function entryHeader(e: TarEntry): Buffer {
  const path = e.file === undefined ? e.name + '/' : e.name;
  const type = e.file === undefined ? '5' : '0';
  const split = splitUstar(path);
  if (split) return header(split.name, e.file === undefined ? 0 : e.size, e.mode, e.mtimeSec, type, split.prefix);
  return Buffer.concat([
    paxPath(path, e.mtimeSec),
    header(path.slice(0, 100), e.file === undefined ? 0 : e.size, e.mode, e.mtimeSec, type),
  ]);
}

/** The entries of a folder tree, folders before what they hold, names sorted: `root` becomes `base` in the archive. */
export async function listTree(root: string, base: string): Promise<TarEntry[]> {
  const out: TarEntry[] = [];
  const walk = async (dir: string, name: string): Promise<void> => {
    const info = await lstat(dir);
    out.push({ name, size: 0, mode: 0o755, mtimeSec: Math.floor(info.mtimeMs / 1000) });
    const names = (await readdir(dir)).sort();
    for (const n of names) {
      const path = join(dir, n);
      let st: Stats;
      try {
        st = await lstat(path);
      } catch {
        continue; // removed while listing
      }
      if (st.isDirectory()) await walk(path, `${name}/${n}`);
      else if (st.isFile())
        out.push({ name: `${name}/${n}`, file: path, size: st.size, mode: 0o644, mtimeSec: Math.floor(st.mtimeMs / 1000) });
    }
  };
  await walk(root, base);
  return out;
}

/** The tar stream of `entries`, chunk by chunk (gzip it with zlib for a .tar.gz). */
export async function* tarChunks(entries: Iterable<TarEntry>, signal?: AbortSignal): AsyncGenerator<Buffer> {
  for (const e of entries) {
    signal?.throwIfAborted();
    yield entryHeader(e);
    if (e.file === undefined) continue;
    let written = 0;
    if (e.size > 0) {
      try {
        for await (const chunk of createReadStream(e.file, { start: 0, end: e.size - 1, signal })) {
          written += (chunk as Buffer).length;
          yield chunk as Buffer;
        }
      } catch (err) {
        if ((err as Error).name === 'AbortError') throw err;
        // Removed or unreadable since it was listed: zeros keep the archive's framing.
      }
    }
    if (written < e.size) yield Buffer.alloc(e.size - written);
    yield padding(e.size);
  }
  yield Buffer.alloc(BLOCK * 2);
}
