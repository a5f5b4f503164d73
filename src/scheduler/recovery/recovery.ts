/**
 * Restart recovery: what the run directories say about runs that never finished. Queued runs
 * come back in their original order; a run recorded RUNNING is adopted only when its eval
 * process is still alive and is still the eval process of that run dir.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isTerminalRunStatus } from '../../statuses.js';
import { readProcessRecord, compareRunIds, type ProcessRecord } from '../../store/catalog.js';
import { isDone, isValidRunId, readSpec, readSummary, runsRoot } from '../../store/run-dir.js';
import type { RunSpec, RunSummary } from '../../store/types.js';
import { isPidAlive, processCommandLine } from '../admission/resource-sampler.js';

export interface UnfinishedRun {
  runId: string;
  runDir: string;
  spec: RunSpec | null;
  /** Why spec.json could not be read (SPEC_INVALID when it is not a valid spec). */
  specError?: unknown;
  summary: RunSummary | null;
  process: ProcessRecord | null;
}

export interface RecoveryScan {
  /** Oldest first (createdAt, then run id): the order they were submitted in. Includes runs marked RUNNING whose eval process was never spawned. */
  queued: UnfinishedRun[];
  /** Recorded RUNNING, or with a process record but no _DONE. */
  running: UnfinishedRun[];
  /** A terminal summary without _DONE (the process died between the two writes). */
  finishedWithoutDone: UnfinishedRun[];
  /** No readable summary or spec. */
  unreadable: UnfinishedRun[];
}

export async function scanUnfinishedRuns(outputsDir: string): Promise<RecoveryScan> {
  const scan: RecoveryScan = { queued: [], running: [], finishedWithoutDone: [], unreadable: [] };
  const root = runsRoot(outputsDir);
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return scan;
  }
  for (const runId of names) {
    if (!isValidRunId(runId)) continue;
    const runDir = join(root, runId);
    if (isDone(runDir)) continue;
    let specError: unknown;
    const [spec, summary, proc] = await Promise.all([
      readSpec(runDir).catch((err: unknown) => {
        specError = err;
        return null;
      }),
      readSummary(runDir).catch(() => null),
      readProcessRecord(runDir),
    ]);
    const run: UnfinishedRun = { runId, runDir, spec, summary, process: proc, ...(specError !== undefined ? { specError } : {}) };
    if (!summary || !spec) scan.unreadable.push(run);
    else if (isTerminalRunStatus(summary.status)) scan.finishedWithoutDone.push(run);
    else if (!proc && (summary.status === 'QUEUED' || neverSpawned(spec, summary))) scan.queued.push(run);
    else scan.running.push(run);
  }
  scan.queued.sort((a, b) => {
    const ca = a.spec?.createdAt ?? a.summary?.createdAt ?? '';
    const cb = b.spec?.createdAt ?? b.summary?.createdAt ?? '';
    return ca < cb ? -1 : ca > cb ? 1 : compareRunIds(a.runId, b.runId);
  });
  return scan;
}

/** Marked RUNNING but the backend stopped before it spawned the eval process: safe to queue again. */
const neverSpawned = (spec: RunSpec, summary: RunSummary): boolean =>
  summary.status === 'RUNNING' && spec.viaSubprocess !== false && summary.episodesDone === 0 && summary.pid === undefined;

/**
 * True when `pid` is alive and its command line is an eval process for `runDir`, so a reused
 * pid is never mistaken for the run's process.
 */
export async function isEvalProcessOf(pid: number, runDir: string, evalProcessMain: string): Promise<boolean> {
  if (!isPidAlive(pid)) return false;
  const argv = await processCommandLine(pid);
  if (!argv) return false;
  const i = argv.indexOf('--run-dir');
  return argv.includes(evalProcessMain) && i >= 0 && argv[i + 1] === runDir;
}
