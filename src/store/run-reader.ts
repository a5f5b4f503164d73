/**
 * Reads what the API serves from a run directory: the summary, the spec, one episode's record,
 * its firing log (paged) and its asset files. Every id and name is checked against its format
 * before it becomes part of a path, so nothing outside the outputs directory can be read.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { BadInputError } from '../errors.js';
import { FILES, episodeDir, readSpec, runDirPath, withRecords } from './run-dir.js';
import { parseSummaryText, SummaryInvalidError } from './summary-schema.js';
import { changedAfterFinish, recordedSummary } from './summary-digest.js';
import type { EpisodeRecord, RunSpec, RunSummary } from './types.js';
import { readRecordsOnDisk } from './records-on-disk.js';
import { hasRecordsFile, readAllRecords, readRecord, readRecordsPage, type RecordsPage } from './records-file.js';
import type { EpisodeStatus } from '../statuses.js';

/** An asset name as the episode writer creates it: no folders, no dot-files, no odd characters. */
export const ASSET_NAME_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;
/** Largest episode index accepted in a path. */
export const MAX_EPISODE_INDEX = 9_999_999;

const EPISODE_RECORD = 'episode.json';
const EPISODE_LOG = 'log.jsonl';
const EPISODE_EVENTS = 'events.jsonl';
const EPISODE_ASSETS = 'assets';

const MIME_BY_EXT: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  json: 'application/json',
  txt: 'text/plain; charset=utf-8',
  mp4: 'video/mp4',
};

export function mimeOf(name: string): string {
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  return MIME_BY_EXT[ext] ?? 'application/octet-stream';
}

export function assertEpisodeIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index > MAX_EPISODE_INDEX) {
    throw new BadInputError(`invalid episode index ${String(index)}: expected an integer from 0 to ${MAX_EPISODE_INDEX}`);
  }
}

export function assertAssetName(name: string): void {
  if (!ASSET_NAME_PATTERN.test(name) || name.includes('..')) {
    throw new BadInputError(`invalid asset name "${name}": letters, digits, '.', '_' and '-' only, not starting with '.'`);
  }
}

/** One page of an episode's log.jsonl. */
export interface LogPage {
  /** Parsed lines; a line that is not JSON is returned as `{ raw: "<text>" }`. */
  lines: Array<{ line: number; entry: Record<string, unknown> }>;
  /** Lines in the whole file. */
  total: number;
}

const isNotFound = (err: unknown): boolean => (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';

async function readJsonOrNull<T>(path: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (err) {
    if (isNotFound(err) || err instanceof SyntaxError) return null;
    throw err;
  }
}

export class RunReader {
  readonly outputsDir: string;

  constructor(outputsDir: string) {
    this.outputsDir = resolve(outputsDir);
  }

  /** The run's directory; throws BAD_USER_INPUT for a malformed id. */
  runDir(runId: string): string {
    return runDirPath(this.outputsDir, runId);
  }

  async exists(runId: string): Promise<boolean> {
    try {
      return (await stat(this.runDir(runId))).isDirectory();
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /**
   * summary.json, or null when it is missing or not a valid summary of this run (checked against
   * its schema); for a finished run whose summary.json was changed since, the recorded state (`summaryModified`).
   */
  async readSummary(runId: string): Promise<RunSummary | null> {
    const path = join(this.runDir(runId), FILES.summary);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
    // A finished run's summary.json edited since: the state recorded at its finish.
    const modified = await changedAfterFinish(this.runDir(runId), text);
    if (modified) return recordedSummary(this.runDir(runId), modified);
    let head: RunSummary;
    try {
      head = parseSummaryText(text, { source: `summary.json of run ${runId}`, runId });
    } catch (err) {
      if (err instanceof SummaryInvalidError) return null;
      throw err;
    }
    return head.episodes.length === 0 && hasRecordsFile(this.runDir(runId))
      ? withRecords(head, await readAllRecords(this.runDir(runId)))
      : head;
  }

  /**
   * summary.json's state and aggregates without the records (`episodes` empty for a run whose
   * records are in records.jsonl), or null as readSummary: for lists and progress.
   */
  async readSummaryHead(runId: string): Promise<RunSummary | null> {
    const dir = this.runDir(runId);
    let text: string;
    try {
      text = await readFile(join(dir, FILES.summary), 'utf8');
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
    const modified = await changedAfterFinish(dir, text);
    if (modified) return recordedSummary(dir, modified);
    try {
      return parseSummaryText(text, { source: `summary.json of run ${runId}`, runId });
    } catch (err) {
      if (err instanceof SummaryInvalidError) return null;
      throw err;
    }
  }

  /**
   * One page of the run's records in index order (only `status` endings when given), read
   * through records.jsonl's index; null for a run without records.jsonl (its records are in summary.json).
   */
  async readEpisodePage(runId: string, offset: number, first: number, status?: EpisodeStatus): Promise<RecordsPage | null> {
    return readRecordsPage(this.runDir(runId), offset, first, status);
  }

  /** spec.json parsed with the run-spec schema, or null when it is missing; SPEC_INVALID naming the field when it is not a valid spec. */
  async readSpec(runId: string): Promise<RunSpec | null> {
    try {
      return await readSpec(this.runDir(runId));
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /**
   * Every finished episode's own episode.json, in index order (the ones that are missing or
   * not a valid record are left out): what the run directory holds when its summary.json does not help.
   */
  async readEpisodeRecords(runId: string): Promise<EpisodeRecord[]> {
    return readRecordsOnDisk(this.runDir(runId));
  }

  /** The episode's record in records.jsonl, else its own episode.json, else its record in the summary, else null. */
  async readEpisode(runId: string, index: number): Promise<EpisodeRecord | null> {
    assertEpisodeIndex(index);
    const dir = this.runDir(runId);
    if (hasRecordsFile(dir)) {
      const inFile = await readRecord(dir, index);
      if (inFile) return inFile;
    }
    const own = await readJsonOrNull<EpisodeRecord>(join(episodeDir(dir, index), EPISODE_RECORD));
    if (own) return own;
    if (hasRecordsFile(dir)) return null;
    const summary = await this.readSummary(runId);
    return summary?.episodes.find((e) => e.index === index) ?? null;
  }

  /** Lines `offset … offset+first-1` of the episode's log.jsonl (streamed, so a long log is not held whole). */
  async readLog(runId: string, index: number, offset: number, first: number): Promise<LogPage> {
    assertEpisodeIndex(index);
    return this.#readLines(EPISODE_LOG, runId, index, offset, first);
  }

  /** Lines `offset … offset+first-1` of the episode's events.jsonl (model calls, retries, tool calls); none without the file. */
  async readEvents(runId: string, index: number, offset: number, first: number): Promise<LogPage> {
    assertEpisodeIndex(index);
    return this.#readLines(EPISODE_EVENTS, runId, index, offset, first);
  }

  async #readLines(file: string, runId: string, index: number, offset: number, first: number): Promise<LogPage> {
    const path = join(episodeDir(this.runDir(runId), index), file);
    const lines: LogPage['lines'] = [];
    let total = 0;
    let stream: ReturnType<typeof createReadStream>;
    try {
      await stat(path);
      stream = createReadStream(path, { encoding: 'utf8' });
    } catch (err) {
      if (isNotFound(err)) return { lines, total };
      throw err;
    }
    const rl = createInterface({ input: stream, crlfDelay: Infinity });
    for await (const text of rl) {
      if (text.trim() === '') continue;
      if (total >= offset && lines.length < first) {
        let entry: Record<string, unknown>;
        try {
          const parsed: unknown = JSON.parse(text);
          entry =
            typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
              ? (parsed as Record<string, unknown>)
              : { value: parsed };
        } catch {
          entry = { raw: text };
        }
        lines.push({ line: total, entry });
      }
      total += 1;
    }
    return { lines, total };
  }

  /**
   * The absolute path of an episode's asset, or null when it does not exist. Throws
   * BAD_USER_INPUT for a malformed run id, index or name.
   */
  async assetPath(runId: string, index: number, name: string): Promise<string | null> {
    assertEpisodeIndex(index);
    assertAssetName(name);
    const assetsDir = join(episodeDir(this.runDir(runId), index), EPISODE_ASSETS);
    const path = resolve(assetsDir, name);
    if (!path.startsWith(assetsDir + sep)) return null;
    try {
      return (await stat(path)).isFile() ? path : null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }
}
