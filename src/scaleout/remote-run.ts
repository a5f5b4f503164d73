/**
 * One run on the head while scale-out workers play its shards: the ledger of committed
 * episodes (first commit of an index wins; a copy committed later is acknowledged and
 * dropped), each shard's state, summary.json rewritten at most 4 times a second as progress,
 * and the final summary, folded from the records in index order exactly as a one-machine run
 * folds them, so the two are byte-identical apart from timing and worker fields.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';
import { BadInputError, CodedError, ConflictError } from '../errors.js';
import type { RunStatus } from '../statuses.js';
import { initialSummary } from '../eval-process/summary-writer.js';
import { EPISODE_FILES } from '../eval-process/episode-writer.js';
import { computeAggregates } from '../store/aggregate.js';
import { writeFileAtomic } from '../store/atomic.js';
import { episodeDir, FILES, readSummary, writeSummary } from '../store/run-dir.js';
import { infraFailureOf } from '../store/infra-failure.js';
import { writeReport } from '../store/report.js';
import type { EpisodeRecord, RunSpec, RunSummary } from '../store/types.js';
import { shardCountOf, shardPlays, shardRange } from '../spec/shards.js';

/** Progress (summary.json while running) is rewritten at most this often. */
export const PROGRESS_INTERVAL_MS = 250;

export const SHARD_STATES = ['WAITING', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type ShardState = (typeof SHARD_STATES)[number];

export interface ShardView {
  index: number;
  first: number;
  end: number;
  state: ShardState;
  /** The worker that took it last (null until one did). */
  worker: string | null;
  committed: number;
  /** How many times a worker took it (above 1 after a recovery). */
  attempts: number;
}

export class RemoteRun {
  readonly spec: RunSpec;
  readonly runDir: string;
  readonly shards: ShardView[];
  readonly #records = new Map<number, EpisodeRecord>();
  /** Indices whose commit is under way or done: the check-and-take that makes the first commit win. */
  readonly #taken = new Set<number>();
  /** Commits being written, by index: a copy of one is answered only once it is written (or has failed). */
  readonly #writing = new Map<number, Promise<void>>();
  #summary: RunSummary;
  #writes: Promise<unknown> = Promise.resolve();
  #progressTimer: NodeJS.Timeout | null = null;
  #lastProgressAt = 0;
  #ended: RunSummary | null = null;
  readonly #onProgress: (n: number) => void;
  readonly #onEnd: (summary: RunSummary) => void;
  /** Each shard's run indices (an audit's scratch run plays only its sample), and how many the run plays in all. */
  readonly #plays: number[][];
  readonly #playCount: number;

  private constructor(spec: RunSpec, runDir: string, base: RunSummary, hooks: { onProgress(n: number): void; onEnd(s: RunSummary): void }) {
    this.spec = spec;
    this.runDir = runDir;
    this.#summary = base;
    this.#onProgress = hooks.onProgress;
    this.#onEnd = hooks.onEnd;
    this.#plays = Array.from({ length: shardCountOf(spec) }, (_, index) => shardPlays(spec, index));
    this.#playCount = this.#plays.reduce((n, p) => n + p.length, 0);
    this.shards = this.#plays.map((plays, index) => ({
      index,
      ...shardRange(spec, index),
      // A shard an audit's sample misses has nothing to play.
      state: (plays.length === 0 ? 'COMPLETED' : 'WAITING') as ShardState,
      worker: null,
      committed: 0,
      attempts: 0,
    }));
  }

  /** Every episode the run plays is committed. */
  get complete(): boolean {
    return this.#records.size === this.#playCount;
  }

  /** Opens the run from its dir: the summary the scheduler wrote at launch, and any episode already committed there. */
  static async open(spec: RunSpec, runDir: string, hooks: { onProgress(n: number): void; onEnd(s: RunSummary): void }): Promise<RemoteRun> {
    const written = await readSummary(runDir).catch(() => null);
    const base = initialSummary(spec, 'RUNNING');
    base.seq = written?.seq ?? 0;
    base.startedAt = written?.startedAt ?? new Date().toISOString();
    const run = new RemoteRun(spec, runDir, base, hooks);
    const dir = join(runDir, FILES.episodes);
    if (existsSync(dir)) {
      for (const name of await readdir(dir)) {
        const path = join(dir, name, EPISODE_FILES.record);
        if (!existsSync(path)) continue;
        const record = JSON.parse(await readFile(path, 'utf8')) as EpisodeRecord;
        run.#taken.add(record.index);
        run.#records.set(record.index, record);
        run.#shardOf(record.index).committed++;
      }
    }
    for (const sh of run.shards) if (sh.committed === run.#plays[sh.index]!.length) sh.state = 'COMPLETED';
    return run;
  }

  get ended(): boolean {
    return this.#ended !== null;
  }

  get episodesDone(): number {
    return this.#records.size;
  }

  /**
   * The shards with an episode not in the run directory yet, in order: what a Redis that forgot
   * the run's jobs must be given again. The run directory is the truth: an episode.json there
   * this ledger has not seen counts.
   */
  async unfinishedShards(): Promise<number[]> {
    const out: number[] = [];
    for (const s of this.shards) {
      const plays = this.#plays[s.index]!;
      if (s.committed < plays.length) for (const i of plays) if (!this.#records.has(i)) await this.#adoptWritten(i, s);
      if (s.committed < plays.length) out.push(s.index);
      else s.state = 'COMPLETED';
    }
    return out;
  }

  /** The committed indices of a shard, for a worker that takes it (again). */
  committedIn(shard: number): number[] {
    // BAD_USER_INPUT for a shard the run does not have.
    this.#shard(shard);
    const out: number[] = [];
    for (const i of this.#plays[shard]!) if (this.#records.has(i)) out.push(i);
    return out;
  }

  claim(shard: number, worker: string): void {
    const s = this.#shard(shard);
    // A shard with every episode committed stays COMPLETED: its taker has nothing to play.
    if (s.state !== 'COMPLETED') s.state = 'RUNNING';
    s.worker = worker;
    s.attempts++;
  }

  /**
   * Commits one episode's folder. Files go first, episode.json last (atomically), so a reader
   * never sees a record without its log. False when the index was committed already; a copy
   * that arrives while the first is being written waits for it, so that a worker told `false`
   * can rely on the episode being on the head (its shard's end may follow at once).
   */
  async commit(shard: number, index: number, files: { path: string; data: string }[]): Promise<boolean> {
    if (this.#ended) throw new ConflictError(`run ${this.spec.runId} has ended (${this.#ended.status}); the episode is not taken`);
    const s = this.#shard(shard);
    if (!Number.isInteger(index) || index < s.first || index >= s.end) {
      throw new BadInputError(`episode ${index} is not in shard ${shard} (${s.first}..${s.end - 1}) of run ${this.spec.runId}`);
    }
    if (!this.#plays[shard]!.includes(index)) throw new BadInputError(`episode ${index} is not in the sample run ${this.spec.runId} plays`);
    for (let w = this.#writing.get(index); w; w = this.#writing.get(index)) await w.catch(() => {});
    if (this.#taken.has(index)) return false;
    const recordFile = files.find((f) => f.path === EPISODE_FILES.record);
    if (!recordFile) throw new BadInputError(`episode ${index}: the commit has no ${EPISODE_FILES.record}`);
    const recordBytes = Buffer.from(recordFile.data, 'base64');
    const record = JSON.parse(recordBytes.toString('utf8')) as EpisodeRecord;
    if (record.index !== index) throw new BadInputError(`episode ${index}: its ${EPISODE_FILES.record} says index ${record.index}`);
    // An episode a stopped eval process ended CANCELLED is not a result: another worker plays it again.
    if (record.status === 'CANCELLED') throw new ConflictError(`episode ${index} was cancelled on its worker; it is not taken`);
    this.#taken.add(index);
    const written = this.#writeEpisode(index, files, recordFile, recordBytes);
    this.#writing.set(index, written);
    try {
      await written;
    } finally {
      this.#writing.delete(index);
    }
    if (this.#ended) return true;
    this.#records.set(index, record);
    s.committed++;
    if (s.committed === this.#plays[shard]!.length) s.state = 'COMPLETED';
    this.#onProgress(this.#records.size);
    if (this.complete) await this.end('COMPLETED');
    else this.#scheduleProgress();
    return true;
  }

  async #writeEpisode(
    index: number,
    files: { path: string; data: string }[],
    recordFile: { path: string; data: string },
    recordBytes: Buffer,
  ): Promise<void> {
    try {
      const dir = episodeDir(this.runDir, index);
      await mkdir(dir, { recursive: true });
      // Plain writes: episode.json, written last and atomically, is what makes the episode count.
      for (const f of files) {
        if (f === recordFile) continue;
        const path = safeJoin(dir, f.path);
        if (dirname(path) !== dir) await mkdir(dirname(path), { recursive: true });
        await writeFile(path, Buffer.from(f.data, 'base64'));
      }
      // The bytes the eval process wrote, unchanged.
      await writeFileAtomic(join(dir, EPISODE_FILES.record), recordBytes);
    } catch (err) {
      this.#taken.delete(index);
      throw err;
    }
  }

  /**
   * A worker's eval process for the shard ended. FAILED ends the run; COMPLETED with episodes
   * not committed here is a shard nobody will play again, so it ends the run FAILED too
   * (SHARD_FAILED, retryable) rather than leave it waiting for them for ever.
   */
  async shardEnded(shard: number, status: string, error: { code: string; message: string } | null): Promise<void> {
    const s = this.#shard(shard);
    if (this.#ended || s.state === 'COMPLETED') return;
    if (status === 'FAILED') {
      s.state = 'FAILED';
      await this.end('FAILED', error ?? { code: 'INTERNAL_SERVER_ERROR', message: `shard ${shard} failed` });
    } else if (status === 'COMPLETED') {
      const missing: number[] = [];
      // The run directory is the truth: an episode written there by a commit this ledger did not see (one answered across a head restart) counts.
      for (const i of this.#plays[shard]!) if (!this.#records.has(i) && !(await this.#adoptWritten(i, s))) missing.push(i);
      if (missing.length === 0) {
        s.state = 'COMPLETED';
        if (this.complete && !this.#ended) await this.end('COMPLETED');
      } else await this.shardFailed(shard, `its worker reported it complete without committing episode(s) ${missing.join(', ')}`);
    } else {
      // Stopped (a worker that was told to stop, or lost): another worker takes it again.
      s.state = 'WAITING';
    }
  }

  /**
   * The shard's job is back on the queue (its worker handed it back, or it was found stalled):
   * WAITING again, unless a worker claimed it since `claims` (its `attempts` when the hand-back
   * was seen) or it is done. True when it changed.
   */
  shardReturned(shard: number, claims: number): boolean {
    const s = this.#shard(shard);
    if (this.#ended || s.state !== 'RUNNING' || s.attempts !== claims) return false;
    s.state = 'WAITING';
    return true;
  }

  /** Takes into the ledger an episode whose episode.json is in the run directory but not here; false when there is none. */
  async #adoptWritten(index: number, s: ShardView): Promise<boolean> {
    if (this.#writing.has(index)) await this.#writing.get(index)!.catch(() => {});
    if (this.#records.has(index)) return true;
    const path = join(episodeDir(this.runDir, index), EPISODE_FILES.record);
    if (!existsSync(path)) return false;
    const record = JSON.parse(await readFile(path, 'utf8')) as EpisodeRecord;
    if (record.index !== index) return false;
    this.#taken.add(index);
    this.#records.set(index, record);
    s.committed++;
    return true;
  }

  /**
   * The shard's job failed for good on the queue (its attempts used up, or refused): nobody will
   * play its missing episodes, so the run ends FAILED (SHARD_FAILED) with what was committed
   * kept, for a retry to play the rest. Nothing when the shard is complete or the run has ended.
   */
  async shardFailed(shard: number, reason: string): Promise<void> {
    const s = this.#shard(shard);
    if (this.#ended || s.committed === this.#plays[shard]!.length) return;
    s.state = 'FAILED';
    await this.end('FAILED', {
      code: 'SHARD_FAILED',
      message: `shard ${shard} (episodes ${s.first}..${s.end - 1}) failed for good on the scale-out workers: ${reason}; the run's ${this.#records.size} committed episode(s) are kept, and a retry (evalctl retry ${this.spec.runId}) plays the rest`,
    });
  }

  /** Writes the final summary (records folded in index order) and report.json; idempotent. */
  async end(status: RunStatus, error: { code: string; message: string } | null = null): Promise<RunSummary> {
    if (this.#ended) return this.#ended;
    if (this.#progressTimer) clearTimeout(this.#progressTimer);
    this.#progressTimer = null;
    const s = this.#fold();
    // Judged here, over every shard's plays, as an eval process judges a whole run (store/infra-failure.ts).
    const infra = status === 'COMPLETED' && !this.spec.audit ? infraFailureOf(s.episodes, this.spec.maxInfraErrorRate) : null;
    s.status = infra ? 'FAILED' : status;
    s.error = infra ?? error;
    s.finishedAt = new Date().toISOString();
    for (const sh of this.shards)
      if (sh.state === 'WAITING' || sh.state === 'RUNNING') sh.state = status === 'COMPLETED' ? 'COMPLETED' : 'CANCELLED';
    this.#ended = s;
    await this.#write(s);
    await writeReport(this.runDir, s).catch(() => {});
    this.#onEnd(s);
    return s;
  }

  /** The summary of the records so far, in the key order an eval process writes. */
  #fold(): RunSummary {
    const records = [...this.#records.values()].sort((a, b) => a.index - b.index);
    const s = structuredClone(this.#summary);
    Object.assign(s, computeAggregates(records, this.spec.metricRanges));
    s.episodes = records;
    s.episodesDone = records.length;
    return s;
  }

  #scheduleProgress(): void {
    if (this.#progressTimer) return;
    const wait = Math.max(0, this.#lastProgressAt + PROGRESS_INTERVAL_MS - Date.now());
    this.#progressTimer = setTimeout(() => {
      this.#progressTimer = null;
      this.#lastProgressAt = Date.now();
      if (!this.#ended) void this.#write(this.#fold()).catch(() => {});
    }, wait);
  }

  #write(s: RunSummary): Promise<void> {
    const next = this.#writes.then(async () => {
      this.#summary.seq += 1;
      s.seq = this.#summary.seq;
      await writeSummary(this.runDir, s);
    });
    this.#writes = next.catch(() => {});
    return next;
  }

  #shard(shard: number): ShardView {
    const s = this.shards[shard];
    if (!Number.isInteger(shard) || !s) throw new BadInputError(`run ${this.spec.runId} has no shard ${shard}`);
    return s;
  }

  #shardOf(index: number): ShardView {
    return this.shards[Math.floor(index / (this.shards[0]!.end - this.shards[0]!.first))]!;
  }
}

/** A path inside `dir`: no absolute paths, no `..`. */
function safeJoin(dir: string, rel: string): string {
  const clean = normalize(rel);
  if (clean.startsWith('..') || clean.startsWith(sep) || clean.includes(`..${sep}`) || clean === '.') {
    throw new CodedError('BAD_USER_INPUT', `episode file "${rel}" is not a plain path inside the episode folder`);
  }
  return join(dir, clean);
}
