/**
 * Rescoring a finished run: each record's stored answer (its first score entry's `answer`,
 * `target` and `choices`) is scored again with another scorer, without calling any model.
 * Everything is checked and computed before anything is written: an unknown scorer, a bad
 * config or a sample the scorer cannot score leaves the run directory as it was.
 */
import type { ScoreEntry } from '../core/score-entry.js';
import { BadInputError, ConflictError } from '../errors.js';
import { prepareScorer, scoreAnswer } from '../scoring/registry.js';
import { isTerminalRunStatus } from '../statuses.js';
import { writeReport, type RunReport } from './report.js';
import { writeRescore, type RescoreFile } from './rescores.js';
import { readSummary } from './run-dir.js';

export interface RescoreRunOptions {
  runDir: string;
  /** A registered scorer name (UNKNOWN_SCORER otherwise). */
  scorer: string;
  config?: Record<string, unknown>;
  /** @default now */
  createdAt?: Date;
}

/** Scores the run again and writes the rescoring and the report. */
export async function rescoreRun(o: RescoreRunOptions): Promise<{ rescore: RescoreFile; report: RunReport }> {
  return writeRescoring(o.runDir, await computeRescore(o));
}

/** Writes a computed rescoring: rescores/<scorer>.json, then report.json from the run's summary. */
export async function writeRescoring(runDir: string, rescore: RescoreFile): Promise<{ rescore: RescoreFile; report: RunReport }> {
  await writeRescore(runDir, rescore);
  const report = await writeReport(runDir, await readSummary(runDir));
  return { rescore, report };
}

/** The rescoring of a finished run, computed and checked, nothing written. */
export async function computeRescore(o: RescoreRunOptions): Promise<RescoreFile> {
  const prepared = prepareScorer(o.scorer, o.config);
  const summary = await readSummary(o.runDir);
  if (!isTerminalRunStatus(summary.status)) {
    throw new ConflictError(`run ${summary.runId} is ${summary.status}: rescore it once it has finished`);
  }
  const rescore: RescoreFile = {
    scorer: prepared.scorer.name,
    config: prepared.given,
    createdAt: (o.createdAt ?? new Date()).toISOString(),
    episodes: [],
    skipped: [],
  };
  for (const r of [...summary.episodes].sort((a, b) => a.index - b.index)) {
    const first = r.scores?.[0];
    if (!first) {
      rescore.skipped.push(r.index);
      continue;
    }
    let score: ScoreEntry;
    try {
      score = scoreAnswer(prepared, {
        answer: first.answer,
        target: first.target,
        ...(first.choices ? { choices: first.choices } : {}),
      });
    } catch (err) {
      // Said of the sample alone, the refusal would leave the user to search the run for it.
      if (!(err instanceof BadInputError)) throw err;
      const sample = r.sampleId === undefined ? '' : `, sample ${r.sampleId}`;
      throw new BadInputError(`episode ${r.index} (${r.episodeId}${sample}): ${err.message}`, { cause: err });
    }
    rescore.episodes.push({ index: r.index, episodeId: r.episodeId, score: { ...score, rescored: true } });
  }
  return rescore;
}
