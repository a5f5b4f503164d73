/** Atomic file writes: readers never see a half-written file (temp file + rename in the same folder). */
import { readFileSync } from 'node:fs';
import { readFile, rename, writeFile, unlink } from 'node:fs/promises';
import { renameSync, writeFileSync, unlinkSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { injectedFault } from './storage-fault.js';

let written = 0;
// Unique per process, thread and write; a counter, since random bytes cost a syscall per file.
const tmpName = (path: string) => `${path}.${process.pid}.${threadId}.${(written++).toString(36)}.tmp`;

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = tmpName(path);
  try {
    injectedFault(tmp);
    await writeFile(tmp, data);
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const tmp = tmpName(path);
  try {
    injectedFault(tmp);
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
    throw err;
  }
}

export const writeJsonAtomic = (path: string, value: unknown): Promise<void> =>
  writeFileAtomic(path, JSON.stringify(value, null, 2) + '\n');

export const writeJsonAtomicSync = (path: string, value: unknown): void => writeFileAtomicSync(path, JSON.stringify(value, null, 2) + '\n');

export async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, 'utf8')) as T;
}

export function readJsonSync<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}
