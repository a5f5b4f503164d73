/**
 * The episode records a run directory holds (each episode's own episode.json), and a summary
 * completed with them: summary.json is rewritten at most every 250 ms while a run plays, so a
 * process that dies (killed, hung) may leave finished episodes on disk that its summary lacks.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { computeAggregates } from './aggregate.js';
import { FILES } from './run-dir.js';
import { episodeRecordSchema } from './summary-schema.js';
import { readAllRecords } from './records-file.js';
import type { EpisodeRecord, RunSummary } from './types.js';

const RECORD = 'episode.json';

const isNotFound = (err: unknown): boolean => (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';

/**
 * Every valid episode.json under `episodes/`, in index order; a missing, partial or invalid one
 * is left out. Records of records.jsonl come first: an episode.json only adds the indices it lacks.
 */
export async function readRecordsOnDisk(runDir: string): Promise<EpisodeRecord[]> {
  const inFile = await readAllRecords(runDir);
  const own = await episodeJsonRecords(runDir);
  if (inFile.length === 0) return own;
  const have = new Set(inFile.map((r) => r.index));
  const extra = own.filter((r) => !have.has(r.index));
  return extra.length === 0 ? inFile : [...inFile, ...extra].sort((a, b) => a.index - b.index);
}

async function episodeJsonRecords(runDir: string): Promise<EpisodeRecord[]> {
  const root = join(runDir, FILES.episodes);
  let names: string[];
  try {
    names = await readdir(root);
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
  const records: EpisodeRecord[] = [];
  for (const name of names.filter((n) => /^ep\d{4,7}$/.test(n))) {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(join(root, name, RECORD), 'utf8'));
    } catch (err) {
      if (isNotFound(err) || err instanceof SyntaxError) continue;
      throw err;
    }
    const parsed = episodeRecordSchema.safeParse(json);
    if (parsed.success) records.push(parsed.data as EpisodeRecord);
  }
  return records.sort((a, b) => a.index - b.index);
}

/** `summary` with the records on disk it lacks (aggregates recomputed); null when it lacks none. */
export async function withRecordsOnDisk(runDir: string, summary: RunSummary): Promise<RunSummary | null> {
  const have = new Set(summary.episodes.map((r) => r.index));
  const extra = (await readRecordsOnDisk(runDir)).filter((r) => !have.has(r.index) && r.index < summary.episodeCount);
  if (extra.length === 0) return null;
  const episodes = [...summary.episodes, ...extra].sort((a, b) => a.index - b.index);
  return { ...summary, ...computeAggregates(episodes, summary.metricRanges), episodes, episodesDone: episodes.length };
}
