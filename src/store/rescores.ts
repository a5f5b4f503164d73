/**
 * Rescorings of a run: `rescores/<scorer>.json` in the run directory, one file per scorer
 * (a second rescoring with the same scorer replaces the first). Episode records are never
 * rewritten (readers and watchers rely on a written record never changing); the record's own
 * `scores` plus these files, in scorer-name order, are the episode's scores.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from '../core/zod.js';
import { readJson, writeJsonAtomic } from './atomic.js';
import { scoreEntrySchema, SummaryInvalidError } from './summary-schema.js';
import type { EpisodeRecord, ScoreEntry } from './types.js';

export const RESCORES_DIR = 'rescores';

export interface RescoreFile {
  scorer: string;
  /** The config as given (empty: the scorer's defaults). */
  config: Record<string, unknown>;
  createdAt: string;
  /** One per record that had a score to redo, in index order. */
  episodes: Array<{ index: number; episodeId: string; score: ScoreEntry }>;
  /** Records with no stored answer to rescore (no score entry), by index. */
  skipped: number[];
}

const rescoreFileSchema = z.object({
  scorer: z.string(),
  config: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  episodes: z.array(z.object({ index: z.number().int().nonnegative(), episodeId: z.string(), score: scoreEntrySchema })),
  skipped: z.array(z.number().int().nonnegative()),
});

const SCORER_FILE = /^[a-z][a-z0-9_]*\.json$/;

export const rescorePath = (runDir: string, scorer: string): string => join(runDir, RESCORES_DIR, `${scorer}.json`);

export async function writeRescore(runDir: string, file: RescoreFile): Promise<void> {
  await mkdir(join(runDir, RESCORES_DIR), { recursive: true });
  await writeJsonAtomic(rescorePath(runDir, file.scorer), file);
}

/** Every rescoring of the run, by scorer name; SUMMARY_INVALID naming a file that is not one. */
export async function readRescores(runDir: string): Promise<RescoreFile[]> {
  const dir = join(runDir, RESCORES_DIR);
  if (!existsSync(dir)) return [];
  const names = (await readdir(dir)).filter((n) => SCORER_FILE.test(n)).sort();
  const out: RescoreFile[] = [];
  for (const name of names) {
    const parsed = rescoreFileSchema.safeParse(await readJson<unknown>(join(dir, name)));
    if (!parsed.success)
      throw new SummaryInvalidError(
        join(dir, name),
        parsed.error.issues.slice(0, 3).map((i) => i.message),
      );
    out.push(parsed.data as RescoreFile);
  }
  return out;
}

/** The episode's scores: its record's own, then each rescoring's, in scorer-name order. */
export function scoresOf(record: EpisodeRecord, rescores: readonly RescoreFile[]): ScoreEntry[] {
  const out = [...(record.scores ?? [])];
  for (const r of rescores) {
    const e = r.episodes.find((x) => x.index === record.index);
    if (e) out.push(e.score);
  }
  return out;
}
