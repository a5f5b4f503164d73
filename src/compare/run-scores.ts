/**
 * A run directory's scores for comparisons and power plans outside a server (`evalctl compare`,
 * `evalctl plan`): read from summary.json, else from the episode records on disk.
 */
import { readdir } from 'node:fs/promises';
import { NotFoundError } from '../errors.js';
import { isTerminalRunStatus, type RunStatus } from '../statuses.js';
import { isValidRunId, runsRoot } from '../store/run-dir.js';
import type { RunReader } from '../store/run-reader.js';
import { scoreTable, type ScoreTable } from './episode-scores.js';
import { isPowerReference } from './power-plan.js';
import { readScoreIndex, summaryStamp } from './score-index.js';

export interface RunScores {
  runId: string;
  graphName: string;
  /** Its status as summary.json says, or null when only episode records could be read. */
  status: string | null;
  scores: ScoreTable;
}

/** NOT_FOUND when the run has no directory; BAD_USER_INPUT for a malformed id. */
export async function readRunScores(reader: RunReader, runId: string): Promise<RunScores> {
  if (!(await reader.exists(runId))) throw new NotFoundError(`run "${runId}" in ${reader.outputsDir}`);
  const dir = reader.runDir(runId);
  const stamp = await summaryStamp(dir);
  const indexed = stamp ? await readScoreIndex(dir, runId, stamp) : null;
  if (indexed) return indexed;
  const summary = await reader.readSummary(runId);
  if (summary)
    return { runId, graphName: summary.graphName, status: summary.status, scores: scoreTable(summary.episodes, summary.metricRanges) };
  const spec = await reader.readSpec(runId).catch(() => null);
  return {
    runId,
    graphName: spec?.graphName ?? '',
    status: null,
    scores: scoreTable(await reader.readEpisodeRecords(runId), spec?.metricRanges),
  };
}

/** How many earlier runs a plan looks through for a comparable one. */
const LOOKBACK = 20;

/**
 * The other finished runs of the same graph that share an episode with `run` and score one
 * differently (isPowerReference), newest first (run ids sort by time), among the LOOKBACK newest
 * of that graph.
 */
export async function comparableRuns(reader: RunReader, run: RunScores): Promise<RunScores[]> {
  let ids: string[];
  try {
    ids = (await readdir(runsRoot(reader.outputsDir))).filter((id) => isValidRunId(id) && id !== run.runId);
  } catch {
    return [];
  }
  ids.sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  const out: RunScores[] = [];
  let looked = 0;
  for (const id of ids) {
    const dir = reader.runDir(id);
    const stamp = await summaryStamp(dir);
    let other: RunScores | null = stamp ? await readScoreIndex(dir, id, stamp) : null;
    if (!other) {
      const summary = await reader.readSummary(id);
      if (summary && summary.graphName === run.graphName)
        other = {
          runId: id,
          graphName: summary.graphName,
          status: summary.status,
          scores: scoreTable(summary.episodes, summary.metricRanges),
        };
    }
    if (!other || other.graphName !== run.graphName || !isTerminalRunStatus(other.status as RunStatus)) continue;
    if (++looked > LOOKBACK) break;
    if (isPowerReference(run.scores, other.scores)) out.push(other);
  }
  return out;
}
