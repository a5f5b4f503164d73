/**
 * `evalctl merge DIR… [--out OUTPUTS] [--json]`: joins the partial run directories written by
 * `evalctl run … --shard k/K` into one run under OUTPUTS/eval_runs/<new run id>, which the
 * server and dashboard read like any other. Prints the merged run's directory (or, with
 * `--json`, its summary). Partials of different specs, overlapping ones and ones that leave
 * episodes out are refused (exit 2) with MERGE_MISMATCH, MERGE_OVERLAP or MERGE_GAP, naming
 * what differs or which episodes.
 */
import { parseCliArgs } from './args.js';
import { runExitCode } from './run-exit-code.js';
import { BadInputError } from '../errors.js';
import { DEFAULT_OUTPUTS_DIR } from '../paths.js';
import { mergeRunDirs } from '../store/merge-run-dirs.js';

const USAGE = 'usage: evalctl merge DIR… [--out OUTPUTS] [--json]';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    {
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { out: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (positionals.length === 0) throw new BadInputError(`missing the partial run directories; ${USAGE}`);
  const merged = await mergeRunDirs(positionals, values.out ?? DEFAULT_OUTPUTS_DIR);
  if (values.json) process.stdout.write(JSON.stringify(merged.summary, null, 2) + '\n');
  else
    process.stdout.write(
      `run ${merged.summary.runId} ${merged.summary.status}: merged ${merged.summary.episodesDone} episodes from ${positionals.length} partial(s)\n` +
        (merged.summary.error ? `  ${merged.summary.error.code}: ${merged.summary.error.message}\n` : '') +
        `run dir: ${merged.dir}\n`,
    );
  return runExitCode(merged.summary);
}
