/**
 * The scheduler's writes of a run's summary.json: the queued summary it starts with, and
 * read-modify-write with the next seq so readers always see a newer file win.
 */
import { initialSummary } from '../../eval-process/summary-writer.js';
import { readSummary, writeSummary } from '../../store/run-dir.js';
import type { RunSpec, RunSummary } from '../../store/types.js';
import type { Job } from './job.js';

/** The summary a queued run starts with; seq 1 so the eval process's first write (seq ≥ 1 + 1) is newer. */
export function queuedSummary(spec: RunSpec): RunSummary {
  return { ...initialSummary(spec, 'QUEUED'), seq: 1 };
}

/** summary.json as it is now; when unreadable, what the job's state implies. */
export async function currentSummary(job: Job): Promise<RunSummary> {
  try {
    return await readSummary(job.runDir);
  } catch {
    return { ...queuedSummary(job.spec), status: job.state === 'queued' ? 'QUEUED' : 'RUNNING', startedAt: job.startedAt };
  }
}

/** Re-reads summary.json (or starts from `current`), applies `change`, writes it back with the next seq. */
export async function rewriteSummary(job: Job, change: (s: RunSummary) => void, current?: RunSummary): Promise<RunSummary> {
  const s = current ? structuredClone(current) : await currentSummary(job);
  change(s);
  s.seq += 1;
  await writeSummary(job.runDir, s);
  return s;
}
