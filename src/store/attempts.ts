/**
 * Attempts of a run: a retry plays some of a finished run's episodes again, under the same run
 * id, seeds, spec and frozen graph. `attempts.json` lists the attempts (the first is the run
 * itself); the records an attempt replaced move, with their episode folders, to
 * `attempts/<n>/` (append-only), so `episodes/` and summary.json always hold each episode's
 * latest attempt and every reader of a run keeps working unchanged.
 */
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BadInputError, CodedError } from '../errors.js';
import type { EpisodeStatus, RunStatus } from '../statuses.js';
import { EPISODE_STATUSES } from '../statuses.js';
import { episodeIndicesOf } from '../spec/shards.js';
import { computeAggregates } from './aggregate.js';
import { writeJsonAtomic } from './atomic.js';
import { FILES, episodeDir, episodeDirName, readSpec, readSummary, writeSummary } from './run-dir.js';
import type { EpisodeRecord, RunSpec, RunSummary } from './types.js';

export const ATTEMPTS_FILE = 'attempts.json';
export const ATTEMPTS_DIR = 'attempts';

/**
 * Endings a retry re-runs unless told otherwise: the ones that are not the agent's doing (a dead
 * or frozen host, a node's exception, an unreachable endpoint, a stop). BUDGET_EXHAUSTED,
 * NO_VERDICT and COMPLETED are results.
 */
export const DEFAULT_RETRY_ENDINGS: readonly EpisodeStatus[] = ['CRASHED', 'TIMEOUT', 'ERROR', 'INFRA_ERROR', 'CANCELLED'];
/** A completed episode is never played twice. */
export const NEVER_RETRIED: readonly EpisodeStatus[] = ['COMPLETED'];

/** An episode a retry plays again, and how its latest earlier attempt ended (null: it never ran). */
export interface RetriedEpisode {
  index: number;
  /** null when it never ran. */
  ending: EpisodeStatus | null;
  /** The attempt whose record that was (the attempt in which it was due, when it never ran). */
  attempt: number;
}

export interface AttemptEntry {
  /** 1 is the run as submitted. */
  attempt: number;
  /** When it was asked for (the run's createdAt for attempt 1). */
  requestedAt: string;
  /** Endings it re-runs (absent on attempt 1). */
  endings?: EpisodeStatus[];
  /** Run indices it plays, ascending (absent on attempt 1: every index of the spec). */
  indices?: number[];
  /** Per index it plays again: the earlier ending (absent on attempt 1). */
  retried?: RetriedEpisode[];
  /**
   * Indices this attempt was to play but ended without playing (cancelled while queued, stopped,
   * killed): their earlier records were put back into the run (restoreUnplayed).
   */
  restored?: number[];
  /** How the run ended after this attempt (written when the next attempt is prepared). */
  status?: RunStatus;
  finishedAt?: string | null;
}

export interface AttemptsFile {
  attempts: AttemptEntry[];
}

/** attempts.json, or null for a run that was never retried. */
export async function readAttempts(runDir: string): Promise<AttemptsFile | null> {
  try {
    const parsed = JSON.parse(await readFile(join(runDir, ATTEMPTS_FILE), 'utf8')) as AttemptsFile;
    return Array.isArray(parsed?.attempts) && parsed.attempts.length > 0 ? parsed : null;
  } catch {
    return null;
  }
}

/** The attempt the run is on (1 when never retried). */
export const currentAttemptOf = (file: AttemptsFile | null): number => file?.attempts.at(-1)?.attempt ?? 1;

/** The indices the latest attempt plays, when it is a retry; undefined on attempt 1. */
export function pendingIndicesOf(file: AttemptsFile | null): number[] | undefined {
  const last = file?.attempts.at(-1);
  return last && last.attempt > 1 ? last.indices : undefined;
}

/** Which attempt played each index last (1 when no retry played it). */
export function attemptOfIndex(file: AttemptsFile | null): (index: number) => number {
  const latest = new Map<number, number>();
  for (const a of file?.attempts ?? []) {
    const restored = new Set(a.restored ?? []);
    for (const i of a.indices ?? []) if (!restored.has(i)) latest.set(i, a.attempt);
  }
  return (index) => latest.get(index) ?? 1;
}

/**
 * The run's records from its attempts' records: for each index, the record of the latest
 * attempt that has one, in episode-index order. Later attempts are listed after earlier ones.
 */
export function foldLatestAttempts(attempts: ReadonlyArray<{ attempt: number; records: readonly EpisodeRecord[] }>): EpisodeRecord[] {
  const latest = new Map<number, { attempt: number; record: EpisodeRecord }>();
  for (const { attempt, records } of attempts) {
    for (const record of records) {
      const had = latest.get(record.index);
      if (!had || had.attempt <= attempt) latest.set(record.index, { attempt, record });
    }
  }
  return [...latest.values()].map((v) => v.record).sort((a, b) => a.index - b.index);
}

/** Checks retry endings: BAD_USER_INPUT for an unknown one or COMPLETED; the default when none are given. */
export function retryEndingsOf(endings: readonly string[] | null | undefined): EpisodeStatus[] {
  if (!endings) return [...DEFAULT_RETRY_ENDINGS];
  // An empty list is a question with no answer, not a request for the default.
  if (endings.length === 0) {
    throw new BadInputError(`endings is empty: name the endings to retry, or leave it out for ${DEFAULT_RETRY_ENDINGS.join(', ')}`);
  }
  const out: EpisodeStatus[] = [];
  for (const raw of endings) {
    const e = raw.trim().toUpperCase();
    if (!(EPISODE_STATUSES as readonly string[]).includes(e)) {
      throw new BadInputError(`unknown ending "${raw}" to retry; one of ${EPISODE_STATUSES.join(', ')}`);
    }
    if ((NEVER_RETRIED as readonly string[]).includes(e)) throw new BadInputError(`a ${e} episode is never played again`);
    if (!out.includes(e as EpisodeStatus)) out.push(e as EpisodeStatus);
  }
  return out;
}

/** Nothing in the run matches the endings and no episode is missing. */
export class NothingToRetryError extends CodedError {
  constructor(runId: string, endings: readonly EpisodeStatus[]) {
    super('NOTHING_TO_RETRY', `run ${runId} has no episode ending ${endings.join(', ')} and none missing: nothing to retry`);
  }
}

/** Which indices a retry plays: those whose latest record ended in `endings`, and those without a record. */
export function planRetry(
  spec: Pick<RunSpec, 'episodeCount' | 'shardSize' | 'repeats' | 'shard'>,
  records: readonly EpisodeRecord[],
  endings: readonly EpisodeStatus[],
  attemptOf: (index: number) => number,
  currentAttempt: number,
): RetriedEpisode[] {
  const byIndex = new Map(records.map((r) => [r.index, r]));
  const out: RetriedEpisode[] = [];
  for (const index of episodeIndicesOf(spec)) {
    const r = byIndex.get(index);
    if (!r) out.push({ index, ending: null, attempt: currentAttempt });
    else if (endings.includes(r.status) && !NEVER_RETRIED.includes(r.status))
      out.push({ index, ending: r.status, attempt: attemptOf(index) });
  }
  return out;
}

export interface PreparedRetry {
  /** The new attempt's number. */
  attempt: number;
  retried: RetriedEpisode[];
  /** summary.json as now written: QUEUED, holding the records kept. */
  summary: RunSummary;
  spec: RunSpec;
}

/**
 * Turns a finished run into a queued retry: the records to replace move to `attempts/<n>/`
 * with a copy of summary.json, report.json and process.json as attempt n left them;
 * attempts.json gets the new attempt; summary.json goes back to QUEUED with the records kept;
 * _DONE goes last. NOTHING_TO_RETRY when there is nothing to play. The caller makes sure the run
 * is finished and nobody runs it.
 */
export async function prepareRetry(runDir: string, endings: readonly EpisodeStatus[], now = new Date()): Promise<PreparedRetry> {
  const spec = await readSpec(runDir);
  const summary = await readSummary(runDir);
  const file = (await readAttempts(runDir)) ?? { attempts: [{ attempt: 1, requestedAt: spec.createdAt }] };
  const prev = file.attempts.at(-1)!;
  const retried = planRetry(spec, summary.episodes, endings, attemptOfIndex(file), prev.attempt);
  if (retried.length === 0) throw new NothingToRetryError(spec.runId, endings);
  const n = prev.attempt;
  const archive = join(runDir, ATTEMPTS_DIR, String(n));
  await mkdir(join(archive, FILES.episodes), { recursive: true });
  for (const r of retried) {
    const from = episodeDir(runDir, r.index);
    if (existsSync(from)) {
      const to = join(archive, FILES.episodes, episodeDirName(r.index));
      await rm(to, { recursive: true, force: true });
      await rename(from, to);
    }
  }
  await copyFile(join(runDir, FILES.summary), join(archive, FILES.summary));
  if (existsSync(join(runDir, FILES.records))) await copyFile(join(runDir, FILES.records), join(archive, FILES.records));
  if (existsSync(join(runDir, 'report.json'))) await copyFile(join(runDir, 'report.json'), join(archive, 'report.json'));
  // process.json names the last eval process: recovery must not take the new attempt for that one.
  if (existsSync(join(runDir, FILES.process))) await rename(join(runDir, FILES.process), join(archive, FILES.process));
  prev.status = summary.status;
  prev.finishedAt = summary.finishedAt;
  const attempt = n + 1;
  file.attempts.push({
    attempt,
    requestedAt: now.toISOString(),
    endings: [...endings],
    indices: retried.map((r) => r.index),
    retried,
  });
  await writeJsonAtomic(join(runDir, ATTEMPTS_FILE), file);
  const replaced = new Set(retried.map((r) => r.index));
  const kept = summary.episodes.filter((r) => !replaced.has(r.index));
  const queued: RunSummary = {
    ...summary,
    ...computeAggregates(kept, summary.metricRanges),
    seq: summary.seq + 1,
    status: 'QUEUED',
    episodes: kept,
    episodesDone: kept.length,
    startedAt: null,
    finishedAt: null,
    error: null,
  };
  delete queued.pid;
  // Nobody plays the run now: records.jsonl keeps only the records kept (the others are in the archive).
  await writeSummary(runDir, queued, { records: 'replace' });
  await rm(join(runDir, FILES.done), { force: true });
  return { attempt, retried, summary: queued, spec };
}

/**
 * An attempt's final summary with the earlier records put back for the episodes it was to play
 * again but ended without playing (a retry cancelled while queued, stopped or killed part-way):
 * prepareRetry moved them to `attempts/<n>/`, and without this the run would show fewer
 * episodes than it measured until the next retry. Their episode folders are copied back (the
 * archive stays as it was) and the attempt lists them as `restored`. Null when there is nothing
 * to put back; the caller writes the summary it returns.
 */
export async function restoreUnplayed(runDir: string, summary: RunSummary): Promise<RunSummary | null> {
  const have = new Set(summary.episodes.map((r) => r.index));
  const back = await putBackUnplayed(runDir, (index) => have.has(index));
  if (back.length === 0) return null;
  const episodes = [...summary.episodes, ...back].sort((a, b) => a.index - b.index);
  return { ...summary, ...computeAggregates(episodes, summary.metricRanges), episodes, episodesDone: episodes.length };
}

/** restoreUnplayed's part on disk: the folders copied back and the attempt's `restored`; the records to add to the run (`has`: whether it has a record of an index). */
export async function putBackUnplayed(runDir: string, has: (index: number) => boolean): Promise<EpisodeRecord[]> {
  const file = await readAttempts(runDir);
  const current = file?.attempts.at(-1);
  if (!file || !current || current.attempt < 2) return [];
  const unplayed = (current.retried ?? []).filter((r) => r.ending !== null && !has(r.index) && !current.restored?.includes(r.index));
  if (unplayed.length === 0) return [];
  const archive = join(runDir, ATTEMPTS_DIR, String(current.attempt - 1));
  const earlier = new Map((await readSummary(archive)).episodes.map((r) => [r.index, r]));
  const back: EpisodeRecord[] = [];
  for (const r of unplayed) {
    const record = earlier.get(r.index);
    if (!record) continue;
    const from = join(archive, FILES.episodes, episodeDirName(r.index));
    if (existsSync(from)) await cp(from, episodeDir(runDir, r.index), { recursive: true, force: true });
    back.push(record);
  }
  if (back.length === 0) return [];
  current.restored = [...(current.restored ?? []), ...back.map((r) => r.index)].sort((a, b) => a - b);
  await writeJsonAtomic(join(runDir, ATTEMPTS_FILE), file);
  return back;
}

/** One retried episode in the report: its latest attempt and ending, and how each earlier attempt ended. */
export interface RetriedEpisodeReport {
  index: number;
  episodeId: string | null;
  /** The attempt whose record the run shows now. */
  attempt: number;
  /** Its ending now (null while the latest attempt has not played it). */
  status: EpisodeStatus | null;
  earlier: Array<{ attempt: number; ending: EpisodeStatus | null }>;
}

/** Every episode a retry played, ascending, with its history; empty for a run never retried. */
export function retriedEpisodesOf(file: AttemptsFile | null, records: readonly EpisodeRecord[]): RetriedEpisodeReport[] {
  if (!file || file.attempts.length < 2) return [];
  const byIndex = new Map(records.map((r) => [r.index, r]));
  const history = new Map<number, RetriedEpisodeReport>();
  for (const a of file.attempts) {
    for (const r of a.retried ?? []) {
      const entry = history.get(r.index) ?? { index: r.index, episodeId: null, attempt: a.attempt, status: null, earlier: [] };
      // An index the attempt never played shows the earlier record it put back.
      entry.attempt = a.restored?.includes(r.index) ? r.attempt : a.attempt;
      // A never-played index listed twice (an attempt that stopped before it) is one earlier attempt.
      if (!entry.earlier.some((e) => e.attempt === r.attempt && e.ending === r.ending))
        entry.earlier.push({ attempt: r.attempt, ending: r.ending });
      history.set(r.index, entry);
    }
  }
  const out = [...history.values()].sort((a, b) => a.index - b.index);
  for (const e of out) {
    const record = byIndex.get(e.index);
    e.episodeId = record?.episodeId ?? null;
    e.status = record?.status ?? null;
  }
  return out;
}
