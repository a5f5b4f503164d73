/**
 * Storage faults: which disk failures end a run with a storage code (a full disk, a read-only
 * file system, a run directory deleted under a running run), and a fault switch for tests.
 */
import { existsSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { CodedError } from '../errors.js';

export const STORAGE_CODES = ['STORAGE_FULL', 'STORAGE_READ_ONLY', 'RUN_DIR_MISSING'] as const;
export type StorageCode = (typeof STORAGE_CODES)[number];

export const isStorageCode = (code: unknown): code is StorageCode => STORAGE_CODES.includes(code as StorageCode);

/** A write to the outputs folder that the disk refused; `code` says why. */
export class StorageError extends CodedError {
  declare readonly code: StorageCode;
  constructor(code: StorageCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

const FULL = new Set(['ENOSPC', 'EDQUOT']);
// Root ignores file modes, so EACCES/EPERM here means a read-only mount or a locked-down folder: either way, not writable.
const READ_ONLY = new Set(['EROFS', 'EACCES', 'EPERM']);

/**
 * The storage code of a failed file operation, or null when it is not a storage fault. ENOENT
 * counts only when `runDir` is given and is gone (a missing file inside a live dir is a bug).
 */
export function storageCodeOf(err: unknown, runDir?: string): StorageCode | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof StorageError) return e.code;
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code !== 'string') continue;
    if (FULL.has(code)) return 'STORAGE_FULL';
    if (READ_ONLY.has(code)) return 'STORAGE_READ_ONLY';
    if (code === 'ENOENT' && runDir !== undefined && !existsSync(runDir)) return 'RUN_DIR_MISSING';
  }
  return null;
}

/** A storage code named in a line of text (a log line, an error message), or null. */
export function storageCodeInText(text: string): StorageCode | null {
  if (/\b(ENOSPC|EDQUOT)\b|no space left on device/i.test(text)) return 'STORAGE_FULL';
  if (/\bEROFS\b|read-only file system/i.test(text)) return 'STORAGE_READ_ONLY';
  if (/\bRUN_DIR_MISSING\b/.test(text)) return 'RUN_DIR_MISSING';
  return null;
}

/** What each storage code tells a user, given the folder involved. */
export function describeStorage(code: StorageCode, dir: string): string {
  switch (code) {
    case 'STORAGE_FULL':
      return `the disk holding ${dir} is full`;
    case 'STORAGE_READ_ONLY':
      return `${dir} is not writable (read-only file system)`;
    case 'RUN_DIR_MISSING':
      return `the run directory ${dir} was deleted`;
  }
}

/** Exit codes of an eval process that stopped on a storage fault (1 is any other failure). */
export const STORAGE_EXIT_CODES: Readonly<Record<StorageCode, number>> = {
  STORAGE_FULL: 3,
  STORAGE_READ_ONLY: 4,
  RUN_DIR_MISSING: 5,
};

export function storageCodeOfExit(exitCode: number | null): StorageCode | null {
  for (const code of STORAGE_CODES) if (STORAGE_EXIT_CODES[code] === exitCode) return code;
  return null;
}

/**
 * Tests only: `EVAL_INJECT_FS_FAULT=<file>`; while that file exists and holds `ENOSPC` or
 * `EROFS` (optionally followed by a folder), every write this code makes (under that folder)
 * fails with that errno, as a full disk or a read-only mount would. Root ignores file modes
 * and CI may not mount file systems, so this is how tests turn a disk full or read-only.
 */
export function injectedFault(path: string): void {
  const control = process.env.EVAL_INJECT_FS_FAULT;
  if (!control || !existsSync(control)) return;
  let text: string;
  try {
    text = readFileSync(control, 'utf8').trim();
  } catch {
    return;
  }
  const [errno, under] = text.split(/\s+/, 2);
  if (errno !== 'ENOSPC' && errno !== 'EROFS') return;
  const target = resolve(path);
  if (under && target !== resolve(under) && !target.startsWith(resolve(under) + sep)) return;
  const err = new Error(
    `${errno}: ${errno === 'ENOSPC' ? 'no space left on device' : 'read-only file system'}, write '${target}'`,
  ) as NodeJS.ErrnoException;
  err.code = errno;
  err.errno = errno === 'ENOSPC' ? -28 : -30;
  err.syscall = 'write';
  err.path = target;
  throw err;
}

/** The last non-empty line of a log, from its final 4 KB. */
async function lastLine(path: string): Promise<string | null> {
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    fh = await open(path, 'r');
    const { size } = await fh.stat();
    const len = Math.min(size, 4096);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    const lines = buf
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0);
    const line = lines[lines.length - 1];
    return line ? line.slice(0, 300) : null;
  } catch {
    return null;
  } finally {
    await fh?.close();
  }
}

/**
 * The storage fault an eval process died of: `known` (from its exit code or the scheduler's own
 * failed write), else what the last line of its stderr log names; with that line for the message.
 */
export async function exitStorageFault(
  stderrLog: string,
  known: StorageCode | null,
): Promise<{ code: StorageCode | null; lastStderr: string | null }> {
  const lastStderr = await lastLine(stderrLog);
  return { code: known ?? (lastStderr ? storageCodeInText(lastStderr) : null), lastStderr };
}
