/**
 * The record of an episode whose thread was ended under it (a play lane held past the per-call
 * limit, play-lanes.ts): what the thread wrote to disk when it got that far, else a TIMEOUT
 * record with what the main thread knows (its index, worker, seed and start), written to the
 * episode's folder beside any log the thread had streamed there.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readJson, writeJsonAtomic } from '../store/atomic.js';
import { episodeDir } from '../store/run-dir.js';
import { episodeRecordSchema } from '../store/summary-schema.js';
import type { EpisodeRecord, RunSpec } from '../store/types.js';
import { playOf, playSeed, repeatsOf } from '../spec/repeats.js';
import { buildRecord } from './batch-eval-runner.js';
import { EPISODE_FILES } from './episode-writer.js';

export interface LostEpisode {
  index: number;
  workerId: number;
  startedAt: Date;
}

/** The episode's record: the one on disk when the thread had written it, else a TIMEOUT one saying `why`, written now. */
export async function recordLostEpisode(runDir: string, spec: RunSpec, lost: LostEpisode, why: string): Promise<EpisodeRecord> {
  const dir = episodeDir(runDir, lost.index);
  const path = join(dir, EPISODE_FILES.record);
  const onDisk = episodeRecordSchema.safeParse(await readJson<unknown>(path).catch(() => null));
  if (onDisk.success && onDisk.data.index === lost.index) return onDisk.data as EpisodeRecord;
  const play = playOf(spec, lost.index);
  const episodeIndex = spec.episodeOffset + play.episode;
  const finishedAt = new Date();
  const record = buildRecord({
    index: lost.index,
    episodeId: `${spec.graphName}/${episodeIndex}`,
    outcome: { status: 'TIMEOUT', error: why },
    result: undefined,
    // What the ended thread heard from its models went with it.
    reportedModels: [],
    seed: playSeed(spec.seed, episodeIndex, play.repeat),
    workerId: lost.workerId,
    durationMs: Math.max(0, finishedAt.getTime() - lost.startedAt.getTime()),
    startedAt: lost.startedAt,
    finishedAt,
    load: undefined,
    stepBudget: 0,
    ...(repeatsOf(spec) > 1 ? { repeat: play.repeat } : {}),
  });
  // A run dir deleted under the run stays deleted (the run ends RUN_DIR_MISSING).
  if (existsSync(runDir)) {
    await mkdir(dir, { recursive: true });
    await writeJsonAtomic(path, record);
  }
  return record;
}
