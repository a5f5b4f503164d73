/**
 * The run directory layout: `outputs/eval_runs/<run_id>/` with spec.json, shared_urls.json,
 * graph.json, summary.json (and, once finished, summary.sha256.json), stdout.log, stderr.log,
 * _DONE and episodes/epNNNN/ (and, once
 * retried, attempts.json and attempts/<n>/: store/attempts.ts).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile, stat } from 'node:fs/promises';
import { basename, join, resolve, sep } from 'node:path';
import { BadInputError } from '../errors.js';
import { parseRunSpec } from '../spec/parse-run-spec.js';
import { SpecInvalidError } from '../spec/spec-errors.js';
import { readJson, writeFileAtomic, writeJsonAtomic } from './atomic.js';
import { parseSummaryText } from './summary-schema.js';
import { injectedFault } from './storage-fault.js';
import type { EpisodeRecord, RunSpec, RunSummary, SharedUrls } from './types.js';
import { makeDirs } from './make-dirs.js';
import { FILES } from './run-files.js';
import { changedAfterFinish, recordSummaryDigest, recordedSummary, summaryText } from './summary-digest.js';
import { computeAggregates } from './aggregate.js';
import { appendChangedRecords, hasRecordsFile, readAllRecords, readAllRecordsSync, replaceRecords } from './records-file.js';

export const RUN_ID_PATTERN = /^\d{8}_\d{6}(?:_\d{1,4})?$/;
export const RUNS_SUBDIR = 'eval_runs';

export { FILES } from './run-files.js';

export const isValidRunId = (id: string): boolean => RUN_ID_PATTERN.test(id);

/** Throws BAD_USER_INPUT for anything that is not a run id, so no id can name a path outside the runs folder. */
export function assertRunId(id: string): void {
  if (!isValidRunId(id)) throw new BadInputError(`invalid run id "${id}": expected YYYYMMDD_HHMMSS or YYYYMMDD_HHMMSS_N`);
}

export const runsRoot = (outputsDir: string): string => join(resolve(outputsDir), RUNS_SUBDIR);

export function runDirPath(outputsDir: string, runId: string): string {
  assertRunId(runId);
  const root = runsRoot(outputsDir);
  const dir = join(root, runId);
  if (!dir.startsWith(root + sep)) throw new BadInputError(`invalid run id "${runId}"`);
  return dir;
}

function stamp(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}_${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/**
 * Creates a fresh run directory named after `now` (second precision), adding `_1`, `_2` …
 * on collision. mkdir without `recursive` is the atomic claim, so two processes never share a dir.
 */
export function createRunDir(outputsDir: string, now: Date = new Date()): { runId: string; dir: string } {
  const root = runsRoot(outputsDir);
  makeDirs(root);
  const base = stamp(now);
  for (let i = 0; i < 10_000; i++) {
    const runId = i === 0 ? base : `${base}_${i}`;
    const dir = join(root, runId);
    try {
      injectedFault(dir);
      mkdirSync(dir);
      mkdirSync(join(dir, FILES.episodes));
      return { runId, dir };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error(`could not allocate a run id for ${base}`);
}

export const episodeDirName = (index: number): string => `ep${String(index).padStart(4, '0')}`;
export const episodeDir = (runDir: string, index: number): string => join(runDir, FILES.episodes, episodeDirName(index));

export async function ensureEpisodeDir(runDir: string, index: number): Promise<string> {
  const dir = episodeDir(runDir, index);
  injectedFault(dir);
  await mkdir(join(dir, 'assets'), { recursive: true });
  return dir;
}

export const writeSpec = (runDir: string, spec: RunSpec) => writeJsonAtomic(join(runDir, FILES.spec), spec);
/** spec.json, parsed with the run-spec schema: SPEC_INVALID naming the field when it does not hold a valid spec. */
export async function readSpec(runDir: string): Promise<RunSpec> {
  const source = `${FILES.spec} of run ${basename(runDir)}`;
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(join(runDir, FILES.spec), 'utf8'));
  } catch (err) {
    if (err instanceof SyntaxError) throw new SpecInvalidError(`${source} is not JSON: ${err.message}`, '(the file)');
    throw err;
  }
  return parseRunSpec(raw, source);
}
export const writeSharedUrls = (runDir: string, urls: SharedUrls) => writeJsonAtomic(join(runDir, FILES.sharedUrls), urls);
export const readSharedUrls = async (runDir: string): Promise<SharedUrls> =>
  existsSync(join(runDir, FILES.sharedUrls)) ? readJson<SharedUrls>(join(runDir, FILES.sharedUrls)) : {};
export interface WriteSummaryOptions {
  /**
   * `append`: records.jsonl gets the summary's records it lacks or holds otherwise (it never
   * loses one: the eval process may be appending). `replace`: records.jsonl holds exactly the
   * summary's records afterwards (only for a run nobody plays, e.g. a retry being prepared).
   * @default 'append'
   */
  records?: 'append' | 'replace';
}

/**
 * Writes the summary's records to records.jsonl (first, so summary.json never counts a record
 * the disk lacks), then summary.json with the state and aggregates only; a terminal summary also
 * records its digest (summary.sha256.json), any other removes one left from an earlier attempt,
 * so an edit after the finish is told apart.
 */
export async function writeSummary(runDir: string, summary: RunSummary, options: WriteSummaryOptions = {}): Promise<void> {
  if (options.records === 'replace') await replaceRecords(runDir, summary.episodes);
  else await appendChangedRecords(runDir, summary.episodes);
  const text = summaryText(summary);
  await writeFileAtomic(join(runDir, FILES.summary), text);
  await recordSummaryDigest(runDir, text, summary);
}

/**
 * `summary` (read from a summary.json without records) with the run's records from records.jsonl
 * (`null`: no such file). A summary.json that holds records (written before records.jsonl, or by
 * hand) is read as it is by every reader. Records appended since summary.json was written count
 * too: episodesDone and the aggregates then follow them.
 */
export function withRecords(summary: RunSummary, records: EpisodeRecord[] | null): RunSummary {
  if (records === null) return summary;
  if (records.length === summary.episodesDone && summary.episodes.length === 0) return { ...summary, episodes: records };
  return { ...summary, ...computeAggregates(records, summary.metricRanges), episodes: records, episodesDone: records.length };
}
/**
 * summary.json, checked against its schema: throws SUMMARY_INVALID for a file that is not a
 * summary. A finished run's summary.json changed since its digest was recorded is not believed:
 * the state recorded at the finish is answered instead, with `summaryModified` (store/summary-digest.ts).
 * `known`: records already checked, by index, which a reader following the run need not check again.
 */
export const readSummary = async (runDir: string, known?: ReadonlyMap<number, EpisodeRecord>): Promise<RunSummary> => {
  const path = join(runDir, FILES.summary);
  const text = await readFile(path, 'utf8');
  const modified = await changedAfterFinish(runDir, text);
  if (modified) return recordedSummary(runDir, modified);
  const head = parseSummaryText(text, { source: path, ...(known ? { known } : {}) });
  return head.episodes.length > 0 || !hasRecordsFile(runDir) ? head : withRecords(head, await readAllRecords(runDir));
};
/**
 * summary.json alone: the state and aggregates, without reading a record (`episodes` is empty
 * for a run whose records are in records.jsonl). For callers that follow progress.
 */
export const readSummaryHead = async (runDir: string): Promise<RunSummary> => {
  const path = join(runDir, FILES.summary);
  const text = await readFile(path, 'utf8');
  const modified = await changedAfterFinish(runDir, text);
  if (modified) return recordedSummary(runDir, modified);
  return parseSummaryText(text, { source: path });
};
export const readSummarySync = (runDir: string): RunSummary => {
  const path = join(runDir, FILES.summary);
  const head = parseSummaryText(readFileSync(path, 'utf8'), { source: path });
  return head.episodes.length > 0 ? head : withRecords(head, readAllRecordsSync(runDir));
};

export async function touchDone(runDir: string): Promise<void> {
  injectedFault(join(runDir, FILES.done));
  await writeFile(join(runDir, FILES.done), new Date().toISOString() + '\n');
}
export const isDone = (runDir: string): boolean => existsSync(join(runDir, FILES.done));

export async function pathExists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}
