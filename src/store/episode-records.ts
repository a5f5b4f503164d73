/**
 * The episode records of a run directory, one at a time in index order, so a reader of a
 * 100,000-episode run never holds more than a few: records.jsonl's; for a run written before
 * it, each episode's own episode.json; for a run without any episode.json (written by hand, or
 * older), its summary's records.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FILES } from './run-dir.js';
import { hasRecordsFile, readRecords } from './records-file.js';
import { episodeRecordSchema, parseSummaryText } from './summary-schema.js';
import type { EpisodeRecord } from './types.js';

const EPISODE_DIR = /^ep(\d{4,7})$/;
/** episode.json files read ahead of the record being handed out. */
const READ_AHEAD = 16;

/** The indexes of the episode folders under `episodes/`, ascending (ep10000 sorts after ep9999). */
export async function episodeIndexes(runDir: string): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(join(runDir, FILES.episodes));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: number[] = [];
  for (const n of names) {
    const m = EPISODE_DIR.exec(n);
    if (m) out.push(Number(m[1]));
  }
  return out.sort((a, b) => a - b);
}

/** The folder name of episode `index` as the writer creates it (at least four digits). */
const dirName = (index: number): string => `ep${String(index).padStart(4, '0')}`;

/**
 * Each finished episode's record, in index order, as its file holds it (fields this version
 * does not know are kept). Missing or invalid episode.json files are skipped: an episode still
 * running has none yet.
 */
export async function* episodeRecords(runDir: string, signal?: AbortSignal): AsyncGenerator<EpisodeRecord & Record<string, unknown>> {
  if (hasRecordsFile(runDir)) {
    yield* readRecords(runDir, signal);
    return;
  }
  const indexes = await episodeIndexes(runDir);
  const read = (index: number): Promise<unknown> =>
    readFile(join(runDir, FILES.episodes, dirName(index), 'episode.json'), 'utf8').then(
      (text) => JSON.parse(text) as unknown,
      () => undefined,
    );
  // A few reads in flight ahead of the one yielded: the disk works while the caller writes, and memory holds at most READ_AHEAD records.
  const ahead: Array<Promise<unknown>> = [];
  let next = 0;
  let found = 0;
  while (next < indexes.length || ahead.length > 0) {
    while (ahead.length < READ_AHEAD && next < indexes.length) ahead.push(read(indexes[next++]!).catch(() => undefined));
    const raw = await ahead.shift()!;
    if (raw === undefined || !episodeRecordSchema.safeParse(raw).success) continue;
    found += 1;
    yield raw as EpisodeRecord & Record<string, unknown>;
  }
  if (found > 0) return;
  let summaryText: string;
  try {
    summaryText = await readFile(join(runDir, FILES.summary), 'utf8');
  } catch {
    return;
  }
  const summary = parseSummaryText(summaryText, { source: join(runDir, FILES.summary) });
  yield* summary.episodes as Array<EpisodeRecord & Record<string, unknown>>;
}
