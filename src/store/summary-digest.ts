/**
 * A finished run's summary.json is sealed: whoever writes a terminal summary records its
 * SHA-256 and the state it says (status, times, error …) in summary.sha256.json, and a reader
 * that finds summary.json changed since (the run has `_DONE` and the digest no longer matches)
 * does not believe it. It answers the recorded state instead, with the episode records found on
 * disk and their aggregates, marked `summaryModified`. A run finished before digests existed
 * has none and is read as it is. This tells an edit apart; it is no seal against someone who
 * can also rewrite the digest.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isTerminalRunStatus, RUN_STATUSES } from '../statuses.js';
import { computeAggregates } from './aggregate.js';
import { writeJsonAtomic } from './atomic.js';
import { FILES } from './run-files.js';
import { hasRecordsFile, readAllRecords } from './records-file.js';
import { episodeRecordSchema } from './summary-schema.js';
import type { EpisodeRecord, RunSummary } from './types.js';

/** The fields a summary derives from its records, left out of the recorded state (they are computed again from the records on disk). */
type Derived = 'episodes' | 'aggregateMetrics' | 'aggregateByTask' | 'statusCounts' | 'timedOut' | 'summaryModified' | 'pid';

/** summary.sha256.json. */
export interface SummaryDigest {
  version: 1;
  /** SHA-256 of summary.json's bytes as written. */
  sha256: string;
  bytes: number;
  /** The terminal summary without its records and what derives from them. */
  recorded: Omit<RunSummary, Derived>;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** summary.json's text: the summary as JSON, two-space indented, as every writer writes it, without its records (they are in records.jsonl). */
export function summaryText(summary: RunSummary): string {
  const { summaryModified: _reader, episodes: _records, ...file } = summary;
  return JSON.stringify(file, null, 2) + '\n';
}

/** After summary.json was written with `text`: records the digest of a terminal summary, removes one an earlier attempt left. */
export async function recordSummaryDigest(runDir: string, text: string, summary: RunSummary): Promise<void> {
  const path = join(runDir, FILES.summaryDigest);
  if (!isTerminalRunStatus(summary.status)) {
    await rm(path, { force: true });
    return;
  }
  const {
    episodes: _e,
    aggregateMetrics: _m,
    aggregateByTask: _t,
    statusCounts: _c,
    timedOut: _o,
    summaryModified: _r,
    pid: _p,
    ...recorded
  } = summary;
  const digest: SummaryDigest = { version: 1, sha256: sha256(text), bytes: Buffer.byteLength(text), recorded };
  await writeJsonAtomic(path, digest);
}

async function readDigest(runDir: string): Promise<SummaryDigest | null> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(join(runDir, FILES.summaryDigest), 'utf8'));
  } catch {
    return null;
  }
  const d = raw as Partial<SummaryDigest> | null;
  const r = d?.recorded;
  // A digest that is not one (edited, truncated) cannot vouch for anything: the summary is read as it is.
  if (typeof d?.sha256 !== 'string' || typeof r !== 'object' || r === null) return null;
  if (!RUN_STATUSES.includes(r.status) || !isTerminalRunStatus(r.status) || typeof r.runId !== 'string') return null;
  return d as SummaryDigest;
}

/**
 * The digest a finished run recorded, when summary.json (`text`) is no longer the file it was
 * recorded for; null when it still is, or when there is nothing to compare (the run has no
 * `_DONE`, or no digest: finished before digests existed).
 */
export async function changedAfterFinish(runDir: string, text: string): Promise<SummaryDigest | null> {
  if (!existsSync(join(runDir, FILES.done))) return null;
  const digest = await readDigest(runDir);
  if (!digest) return null;
  // A finished run's summary is read again at every look at it: hash the same file once (a 40 MB one takes ~0.4 s).
  const file = await stat(join(runDir, FILES.summary)).catch(() => null);
  const seen = file ? `${digest.sha256}:${file.size}:${file.mtimeMs}` : undefined;
  if (seen !== undefined && verified.get(runDir) === seen && Buffer.byteLength(text) === file!.size) return null;
  if (digest.sha256 === sha256(text)) {
    if (seen !== undefined) remember(runDir, seen);
    return null;
  }
  // A writer replacing a finished summary writes summary.json, then its digest: read both again once, past that moment.
  const [again, now] = await Promise.all([readDigest(runDir), readFile(join(runDir, FILES.summary), 'utf8').catch(() => null)]);
  if (again && now !== null && again.sha256 === sha256(now)) return null;
  return again ?? digest;
}

/** Summaries found unchanged: run dir → digest, size and mtime of the file then (the last VERIFIED_KEPT). */
const verified = new Map<string, string>();
const VERIFIED_KEPT = 512;

function remember(runDir: string, seen: string): void {
  verified.delete(runDir);
  verified.set(runDir, seen);
  if (verified.size > VERIFIED_KEPT) verified.delete(verified.keys().next().value!);
}

/** The run's records.jsonl, else every episode.json of the run that holds a valid record, in index order (never summary.json's copies). */
async function recordsOnDisk(runDir: string): Promise<EpisodeRecord[]> {
  if (hasRecordsFile(runDir)) return readAllRecords(runDir);
  let names: string[];
  try {
    names = await readdir(join(runDir, FILES.episodes));
  } catch {
    return [];
  }
  const records: EpisodeRecord[] = [];
  for (const name of names.filter((n) => /^ep\d{4,7}$/.test(n))) {
    try {
      const parsed = episodeRecordSchema.safeParse(JSON.parse(await readFile(join(runDir, FILES.episodes, name, 'episode.json'), 'utf8')));
      if (parsed.success) records.push(parsed.data as EpisodeRecord);
    } catch {
      // missing or not JSON: not a finished episode
    }
  }
  return records.sort((a, b) => a.index - b.index);
}

/** The run as its digest recorded it, with the records on disk and their aggregates, marked `summaryModified`. */
export async function recordedSummary(runDir: string, digest: SummaryDigest): Promise<RunSummary> {
  const episodes = await recordsOnDisk(runDir);
  return {
    ...digest.recorded,
    episodesDone: episodes.length,
    ...computeAggregates(episodes, digest.recorded.metricRanges),
    episodes,
    summaryModified: true,
  };
}
