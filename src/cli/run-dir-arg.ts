/** The `<run>` argument of report/rescore: a run id under `--outputs`, or the path of a run directory. */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BadInputError, NotFoundError } from '../errors.js';
import { FILES, isValidRunId, runDirPath } from '../store/run-dir.js';

export function runDirOf(run: string | undefined, outputsDir: string, usage: string): string {
  if (!run) throw new BadInputError(`a run id or run directory is required; ${usage}`);
  const dir = isValidRunId(run) ? runDirPath(outputsDir, run) : resolve(run);
  if (!existsSync(join(dir, FILES.summary)) || !statSync(dir).isDirectory()) {
    throw new NotFoundError(isValidRunId(run) ? `run ${run} (in ${outputsDir})` : `run directory ${dir}`);
  }
  return dir;
}
