/** The `<run>` argument of the commands that read a run: a run id under `--outputs`, or the path of a run directory. */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { BadInputError, NotFoundError } from '../errors.js';
import { FILES, isValidRunId, RUNS_SUBDIR, runDirPath } from '../store/run-dir.js';

export function runDirOf(run: string | undefined, outputsDir: string, usage: string): string {
  if (!run) throw new BadInputError(`a run id or run directory is required; ${usage}`);
  const dir = isValidRunId(run) ? runDirPath(outputsDir, run) : resolve(run);
  if (!existsSync(join(dir, FILES.summary)) || !statSync(dir).isDirectory()) {
    throw new NotFoundError(isValidRunId(run) ? `run ${run} (in ${outputsDir})` : `run directory ${dir}`);
  }
  return dir;
}

/** True for a folder a run wrote: it holds the run's spec.json or its summary.json. */
export function isRunDir(dir: string): boolean {
  try {
    return statSync(dir).isDirectory() && (existsSync(join(dir, FILES.spec)) || existsSync(join(dir, FILES.summary)));
  } catch {
    return false;
  }
}

/**
 * The outputs folder and run id a `<run>` argument names, for the commands that read runs
 * through an outputs folder (compare, plan: they look at other runs beside it): a run id under
 * `outputsDir`, or the path `run` prints, `<outputs>/eval_runs/<run id>`.
 */
export function runRefOf(run: string, outputsDir: string): { outputsDir: string; runId: string } {
  if (isValidRunId(run)) return { outputsDir, runId: run };
  const dir = resolve(run);
  const runId = basename(dir);
  if (!isValidRunId(runId) || basename(dirname(dir)) !== RUNS_SUBDIR) {
    throw new BadInputError(
      `"${run}" is neither a run id (YYYYMMDD_HHMMSS or YYYYMMDD_HHMMSS_N) nor a run directory (<outputs>/${RUNS_SUBDIR}/<run id>)`,
    );
  }
  return { outputsDir: dirname(dirname(dir)), runId };
}
