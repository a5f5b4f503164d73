/**
 * One sandbox per episode: a directory under a folder of the OS temp dir named after this
 * process (`<pid>-<start time>`), created at the episode's first use with the task's files,
 * owned by the sandbox's own uid where this process is root; destroyed (its processes killed,
 * its directory removed) when the episode is evicted, and all of them when the process exits.
 * Folders left by a process that died (SIGKILL) are reaped by the next pool that starts.
 */
import { createHash } from 'node:crypto';
import { chownSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { BadInputError } from '../../errors.js';
import { killGroup, workdirName } from '../tools/episode-workdirs.js';
import type { SandboxIdentity } from './bwrap-argv.js';

/** The folder of the OS temp dir that holds every process's sandboxes. */
export const SANDBOX_ROOT_NAME = 'batch-eval-sandboxes';

export interface Sandbox extends SandboxIdentity {
  /** The folder holding `dir` and `tmp`. */
  home: string;
  /** Aborted at destruction: stops the calls still running. */
  controller: AbortController;
  /** Process groups of calls still running. */
  groups: Set<number>;
  /** Settled once the task's setup ran (or failed: then it holds why). */
  ready?: Promise<string | undefined>;
}

function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Removes the sandbox folders of processes that no longer run; returns how many. */
export function reapLeftovers(base: string): number {
  let reaped = 0;
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return 0;
  }
  for (const name of names) {
    const m = /^(\d+)-(\d+)$/.exec(name);
    if (!m) continue;
    // A pid reused by another process has another start time.
    if (startTime(Number(m[1])) === m[2]) continue;
    rmSync(join(base, name), { recursive: true, force: true, maxRetries: 3 });
    reaped++;
  }
  return reaped;
}

const isRoot = (): boolean => process.getuid?.() === 0;

/** Where sandboxes live: every folder above must be traversable by a sandbox's own uid. */
export const SANDBOX_DIR_ENV = 'EVAL_SANDBOX_DIR';

/** `EVAL_SANDBOX_DIR`, else (as root, whose TMPDIR may be private) /var/tmp/batch-eval-sandboxes, else the OS temp dir's. */
export function sandboxBase(env: NodeJS.ProcessEnv = process.env): string {
  const set = env[SANDBOX_DIR_ENV]?.trim();
  if (set) return resolve(set);
  return isRoot() ? join('/var/tmp', SANDBOX_ROOT_NAME) : join(tmpdir(), SANDBOX_ROOT_NAME);
}

function uidFor(key: string): number {
  const h = createHash('sha256').update(`${process.pid}\u0000${key}`).digest().readUInt32BE(0);
  return 1_000_000 + (h % (1 << 24));
}

export class SandboxPool {
  #root: string | undefined;
  readonly #sandboxes = new Map<string, Sandbox>();
  readonly #onExit = (): void => this.closeSync();
  readonly #givenBase: string | undefined;

  /** `base`: where the sandboxes live; unset, sandboxBase() at first use. */
  constructor(base?: string) {
    this.#givenBase = base;
  }

  /** This process's folder of sandboxes; created (after reaping the dead's) on first use. */
  get root(): string {
    if (this.#root === undefined) {
      const base = this.#givenBase ?? sandboxBase();
      mkdirSync(base, { recursive: true, mode: 0o711 });
      reapLeftovers(base);
      const root = join(base, `${process.pid}-${startTime(process.pid) ?? '0'}`);
      mkdirSync(root, { recursive: true, mode: 0o711 });
      this.#root = root;
      process.once('exit', this.#onExit);
    }
    return this.#root;
  }

  get(key: string): Sandbox | undefined {
    return this.#sandboxes.get(key);
  }

  /** The episode's sandbox, made with `files` (relative path → text) in it on first use. */
  open(key: string, files: Record<string, string>): Sandbox {
    const had = this.#sandboxes.get(key);
    if (had) return had;
    const home = join(this.root, workdirName(key));
    const dir = join(home, 'work');
    const tmp = join(home, 'tmp');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    mkdirSync(tmp, { mode: 0o700 });
    for (const [name, content] of Object.entries(files)) {
      const target = resolve(dir, name);
      const rel = relative(dir, target);
      if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
        throw new BadInputError(`environment files: ${JSON.stringify(name)} is not a path inside the working directory`);
      }
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    }
    const uid = isRoot() ? uidFor(key) : undefined;
    if (uid !== undefined) chownTree(home, uid);
    const sb: Sandbox = { home, dir, tmp, uid, controller: new AbortController(), groups: new Set() };
    this.#sandboxes.set(key, sb);
    return sb;
  }

  /** Kills what still runs in the episode's sandbox and removes it; a no-op for an unknown key. */
  destroy(key: string): void {
    const sb = this.#sandboxes.get(key);
    if (!sb) return;
    this.#sandboxes.delete(key);
    sb.controller.abort(new Error('the episode ended'));
    for (const pgid of sb.groups) killGroup(pgid);
    rmSync(sb.home, { recursive: true, force: true, maxRetries: 3 });
  }

  /** Destroys every sandbox and removes this process's folder; idempotent. */
  closeSync(): void {
    for (const key of [...this.#sandboxes.keys()]) this.destroy(key);
    if (this.#root !== undefined) {
      rmSync(this.#root, { recursive: true, force: true, maxRetries: 3 });
      process.removeListener('exit', this.#onExit);
      this.#root = undefined;
    }
  }
}

/** Gives `dir` and everything in it to `uid` (the task's files were written by this process). */
export function chownTree(dir: string, uid: number): void {
  chownSync(dir, uid, uid);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) chownTree(p, uid);
    else if (!e.isSymbolicLink()) chownSync(p, uid, uid);
  }
}
