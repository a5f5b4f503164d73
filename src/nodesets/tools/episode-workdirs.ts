/**
 * One working directory per episode, under a folder of the OS temp dir that belongs to this
 * process: created at the episode's first tool call, removed (after killing what still runs
 * there) when the episode is evicted, and all of them when the process exits.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { BadInputError } from '../../errors.js';

/** The temp subfolder a tool call's TMPDIR points at (inside its working directory). */
export const TMP_SUBDIR = '.tmp';

/** A readable, collision-free folder name for an episode key (`<runId>:<index>`). */
export function workdirName(episodeKey: string): string {
  const readable = episodeKey.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80);
  const hash = createHash('sha256').update(episodeKey).digest('hex').slice(0, 10);
  return `${readable}-${hash}`;
}

interface Episode {
  dir: string;
  /** Aborted at eviction: stops the episode's running calls. */
  controller: AbortController;
  /** Process-group ids of calls still running, killed at eviction. */
  groups: Set<number>;
}

export class EpisodeWorkdirs {
  #root: string | undefined;
  readonly #episodes = new Map<string, Episode>();
  readonly #onExit = (): void => this.closeSync();

  /** The parent folder of every episode's directory; created on first use. */
  get root(): string {
    if (this.#root === undefined) {
      this.#root = mkdtempSync(join(tmpdir(), 'batch-eval-tools-'));
      process.once('exit', this.#onExit);
    }
    return this.#root;
  }

  /**
   * The episode's directory (created with `files` in it on first use) and the signal that
   * its eviction aborts.
   */
  open(episodeKey: string, files: Record<string, string> = {}): Episode {
    let ep = this.#episodes.get(episodeKey);
    if (ep) return ep;
    const dir = join(this.root, workdirName(episodeKey));
    mkdirSync(join(dir, TMP_SUBDIR), { recursive: true });
    for (const [name, content] of Object.entries(files)) {
      const target = resolve(dir, name);
      const rel = relative(dir, target);
      if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
        throw new BadInputError(`config files: ${JSON.stringify(name)} is not a path inside the working directory`);
      }
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    }
    ep = { dir, controller: new AbortController(), groups: new Set() };
    this.#episodes.set(episodeKey, ep);
    return ep;
  }

  /** Whether the episode has a directory now. */
  has(episodeKey: string): boolean {
    return this.#episodes.has(episodeKey);
  }

  /** Kills the episode's running calls and removes its directory; a no-op for an unknown key. */
  evict(episodeKey: string): void {
    const ep = this.#episodes.get(episodeKey);
    if (!ep) return;
    this.#episodes.delete(episodeKey);
    ep.controller.abort(new Error('the episode ended'));
    for (const pgid of ep.groups) killGroup(pgid);
    rmSync(ep.dir, { recursive: true, force: true, maxRetries: 3 });
  }

  /** Evicts every episode and removes the root; idempotent. */
  closeSync(): void {
    for (const key of [...this.#episodes.keys()]) this.evict(key);
    if (this.#root !== undefined) {
      rmSync(this.#root, { recursive: true, force: true, maxRetries: 3 });
      process.removeListener('exit', this.#onExit);
      this.#root = undefined;
    }
  }
}

/** SIGKILL to a whole process group (a tool's background children too); gone already is fine. */
export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // ESRCH: the group has no process left.
  }
}
