/** A finished run directory written by hand from episode records (no eval process), for tests of what reads runs. */
import { computeAggregates } from '../../src/store/aggregate.js';
import { createRunDir, touchDone, writeSummary } from '../../src/store/run-dir.js';
import type { EpisodeRecord, RunSummary } from '../../src/store/types.js';

/** One COMPLETED episode `index` of `episodeId` with these metrics. */
export function scoredRecord(index: number, metrics: EpisodeRecord['metrics'], episodeId = `d/test/${index}`): EpisodeRecord {
  return {
    index,
    episodeId,
    status: 'COMPLETED',
    steps: 1,
    metrics,
    seed: index,
    workerId: 0,
    durationMs: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:00.000Z',
    stepBudget: 10,
    assets: [],
  };
}

/** Writes a COMPLETED run of `episodes` under `outputs` (its id from `at`), aggregates computed as a run does; `edit` may change the summary first. */
export async function writeScoredRun(
  outputs: string,
  at: Date,
  episodes: EpisodeRecord[],
  edit?: (s: RunSummary) => void,
): Promise<{ runId: string; dir: string }> {
  const { runId, dir } = createRunDir(outputs, at);
  const summary: RunSummary = {
    seq: 1,
    runId,
    status: 'COMPLETED',
    graphName: 'qa_llm',
    episodeCount: episodes.length,
    workerCount: 1,
    seed: 0,
    priority: 0,
    episodesDone: episodes.length,
    createdAt: at.toISOString(),
    startedAt: at.toISOString(),
    finishedAt: at.toISOString(),
    error: null,
    ...computeAggregates(episodes),
    episodes,
  };
  edit?.(summary);
  await writeSummary(dir, summary);
  await touchDone(dir);
  return { runId, dir };
}
