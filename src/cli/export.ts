/**
 * `evalctl export <run> [--format csv|jsonl|json|tar] [--outputs DIR] [-o FILE]`: a run's
 * episodes (CSV or JSON Lines), its summary (JSON) or its whole directory (tar.gz), read from
 * the outputs folder, written to standard output or FILE. Columns: docs/export.md.
 */
import { createWriteStream, existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BadInputError, NotFoundError } from '../errors.js';
import { EXPORT_FORMATS, exportFormatOf, exportStream } from '../export/run-export.js';
import { DEFAULT_OUTPUTS_DIR } from '../paths.js';
import { FILES, isValidRunId, RUNS_SUBDIR, runDirPath } from '../store/run-dir.js';
import { isRunDir } from './run-dir-arg.js';
import { parseCliArgs } from './args.js';

const USAGE = `usage: evalctl export <run-id | run-dir> [--format ${EXPORT_FORMATS.join('|')}] [--outputs DIR] [-o FILE] (tar.gz is tar)`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    {
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        format: { type: 'string', short: 'f' },
        outputs: { type: 'string' },
        output: { type: 'string', short: 'o' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    USAGE,
  );
  if (values.help === true) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (positionals.length !== 1)
    throw new BadInputError(
      positionals.length === 0 ? `missing the run (its id or its directory); ${USAGE}` : `expected one run; ${USAGE}`,
    );
  const format = exportFormatOf(values.format ?? 'csv');
  if (format === undefined)
    throw new BadInputError(`--format must be one of ${EXPORT_FORMATS.join(', ')} (or tar.gz, the same as tar), got "${values.format}"`);
  const runId = positionals[0]!;
  const dir = isValidRunId(runId) ? runDirPath(values.outputs ?? DEFAULT_OUTPUTS_DIR, runId) : resolve(runId);
  if (!existsSync(dir)) throw new NotFoundError(isValidRunId(runId) ? `run ${runId} (in ${dir})` : `run directory ${dir}`);
  // Any other folder would export as an empty CSV with status 0, which reads as a run without episodes.
  if (!isRunDir(dir))
    throw new BadInputError(
      `${dir} is not a run directory (it holds no ${FILES.spec} or ${FILES.summary}): give a run id under --outputs or a run's directory, <outputs>/${RUNS_SUBDIR}/<run id>`,
    );
  let body: Readable;
  try {
    body = await exportStream(dir, format);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`summary.json of run ${runId}`);
    throw err;
  }
  const target = values.output;
  if (target === undefined || target === '-') {
    try {
      await pipeline(body, process.stdout);
    } catch (err) {
      // The reader went away (`| head`): like other Unix tools, stop quietly.
      if ((err as NodeJS.ErrnoException).code === 'EPIPE') return 0;
      throw err;
    }
    return 0;
  }
  // Written beside the target and renamed at the end: a failed export leaves no half file under its name.
  const partial = `${target}.partial-${process.pid}`;
  try {
    await pipeline(body, createWriteStream(partial));
    await rename(partial, target);
  } catch (err) {
    // Where the partial could not even be opened, removing it fails too: the first error is the one to tell.
    await rm(partial, { force: true }).catch(() => {});
    throw outputError(err, target, partial);
  }
  return 0;
}

/** An error writing `-o FILE`, said of the path the user gave rather than the partial file beside it. */
function outputError(err: unknown, target: string, partial: string): unknown {
  const e = err as NodeJS.ErrnoException;
  if (e.path !== partial) return err;
  const folder = dirname(resolve(target));
  if (e.code === 'ENOENT') return new BadInputError(`-o ${target}: its folder ${folder} does not exist`, { cause: err });
  if (e.code === 'ENOTDIR') return new BadInputError(`-o ${target}: its folder ${folder} is not a folder`, { cause: err });
  return new Error(`cannot write -o ${target} (${e.code ?? e.message})`, { cause: err });
}
