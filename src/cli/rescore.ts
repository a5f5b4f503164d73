/**
 * `evalctl rescore <run> --scorer NAME [--config JSON] [--json] [--outputs DIR]`: scores the
 * run's stored answers again with another scorer (no model is called), keeps the original
 * scores, writes rescores/NAME.json and the report, and prints the report.
 */
import { BadInputError } from '../errors.js';
import { DEFAULT_OUTPUTS_DIR } from '../paths.js';
import { prepareScorer } from '../scoring/registry.js';
import { rescoreRun } from '../store/rescore-run.js';
import { parseCommandArgs } from './args.js';
import { renderReport } from './report-text.js';
import { runDirOf } from './run-dir-arg.js';

const USAGE = 'usage: evalctl rescore <run-id | run-dir> --scorer NAME [--config JSON] [--json] [--outputs DIR]';

function parseConfig(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (err) {
    throw new BadInputError(`--config must be a JSON object: ${(err as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new BadInputError(`--config must be a JSON object, got ${raw}`);
  return v as Record<string, unknown>;
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    argv,
    {
      scorer: { type: 'string' },
      config: { type: 'string' },
      outputs: { type: 'string' },
    },
    USAGE,
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (!values.scorer) throw new BadInputError(`--scorer is required; ${USAGE}`);
  const config = parseConfig(values.config);
  // The scorer and its config are refused before the run is even looked up.
  prepareScorer(values.scorer, config);
  const runDir = runDirOf(positionals[0], values.outputs ?? DEFAULT_OUTPUTS_DIR, USAGE);
  const { rescore, report } = await rescoreRun({ runDir, scorer: values.scorer, ...(config ? { config } : {}) });
  if (values.json) {
    process.stdout.write(JSON.stringify({ rescore, report }, null, 2) + '\n');
    return 0;
  }
  process.stdout.write(
    `rescored ${rescore.episodes.length} episode(s) with ${rescore.scorer}` +
      `${rescore.skipped.length ? ` (${rescore.skipped.length} without a stored answer skipped)` : ''}\n\n`,
  );
  process.stdout.write(renderReport(report));
  return 0;
}
