/**
 * Runs a server started without `--resume` let stand: `serve --resume` resumes the runs the
 * previous server's stop interrupted, not those an earlier stop did, which a server in between
 * already chose to leave ABORTED. Kept in the outputs folder as `{ runId: finishedAt }`: a run
 * retried since, and interrupted again, has a new end and is resumed as usual.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../store/atomic.js';

/** The file, in the outputs folder (next to eval_runs/). */
export const RESUME_DECLINED_FILE = '.resume-declined.json';

type Declined = Record<string, string>;

async function readDeclined(outputsDir: string): Promise<Declined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(join(outputsDir, RESUME_DECLINED_FILE), 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    // Missing or unreadable: nothing declined (the worst case is the behaviour before this file existed).
    return {};
  }
}

/** The last write of this process, so two notes (the start's, an adopted run's end) never read and write over each other. */
let writing: Promise<void> = Promise.resolve();

/** Notes that each run in `ends` (runId → its summary's finishedAt) was left as it ended. */
export function declineResume(outputsDir: string, ends: Readonly<Record<string, string>>): Promise<void> {
  if (Object.keys(ends).length === 0) return Promise.resolve();
  const write = writing.then(async () => {
    const declined = { ...(await readDeclined(outputsDir)), ...ends };
    await writeFileAtomic(join(outputsDir, RESUME_DECLINED_FILE), JSON.stringify(declined, null, 2) + '\n');
  });
  writing = write.catch(() => {});
  return write;
}

/** Whether the run ending at `finishedAt` is one a server without `--resume` left as it was. */
export function declinedRuns(outputsDir: string): Promise<(runId: string, finishedAt: string | null) => boolean> {
  return readDeclined(outputsDir).then((d) => (runId, finishedAt) => finishedAt !== null && d[runId] === finishedAt);
}
