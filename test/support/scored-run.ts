/** A finished run directory written by hand from episode records (no eval process), for tests of what reads runs. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { computeAggregates } from '../../src/store/aggregate.js';
import { createRunDir, touchDone, writeSummary } from '../../src/store/run-dir.js';
import { MANIFEST_FILE, type RunManifest } from '../../src/store/run-manifest.js';
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

/** Writes a run's manifest.json: project 0.1.0 on linux/x64, no nodeset, dataset `chg` (split test) with these files' hashes. */
export async function writeDatasetManifest(runDir: string, files: Record<string, string>): Promise<void> {
  const list = Object.entries(files).map(([path, sha256]) => ({ path, sha256, bytes: 1 }));
  const manifest: RunManifest = {
    version: 1,
    project: { name: 'batch-eval', version: '0.1.0' },
    graphSha256: '0'.repeat(64),
    nodesets: [],
    dataset: { name: 'chg', source: 'workspace', split: 'test', sha256: list.map((f) => f.sha256).join(''), files: list },
    runtime: { node: 'v20.19.0', platform: 'linux', arch: 'x64' },
  };
  await writeFile(join(runDir, MANIFEST_FILE), JSON.stringify(manifest));
}
