/**
 * `evalctl gate --baseline A --candidate B [--require "success >= -0.02" …] [--config gate.toml]
 * [--alpha 0.05] [--format text|markdown|json] [--junit FILE] [--outputs DIR | --server URL]`: the
 * verdict of a candidate run against a baseline (compare/gate-verdicts.ts, or the server's `gate`
 * query) for a CI job. Exit 0 pass, 1 fail, 2 inconclusive; 3 for bad input (a flag, the config,
 * an unknown run, runs that share no episode), 4 for anything else (docs/cli.md).
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { assertDistinctRuns } from '../compare/compare-runs.js';
import { parseRequirement, type GateRequirement } from '../compare/gate-requirement.js';
import { GATE_VERDICTS, gateVerdicts, type GateResult } from '../compare/gate-verdicts.js';
import { readRunScores } from '../compare/run-scores.js';
import { BadInputError, errorMessage, isInputFault } from '../errors.js';
import { DEFAULT_OUTPUTS_DIR } from '../paths.js';
import { RunReader } from '../store/run-reader.js';
import { parseCommandArgs } from './args.js';
import { readGateConfig } from './gate-config.js';
import { remoteGate } from './remote-gate.js';
import { gateJunitXml } from './gate-junit.js';
import { renderGateMarkdown, renderGateText } from './gate-report.js';
import { runRefOf } from './run-dir-arg.js';

const USAGE =
  'usage: evalctl gate --baseline RUN --candidate RUN [--require "METRIC >= -0.02" …] [--config gate.toml] [--alpha 0.05] [--format text|markdown|json] [--junit FILE] [--outputs DIR | --server URL [--token T]] (a run: its id under --outputs or on the server, or its directory)';

/** Exit code of bad input (a flag, the config, a run); 4 for any other error. 0–2 are the verdicts. */
export const GATE_INPUT_ERROR_EXIT_CODE = 3;
export const GATE_OTHER_ERROR_EXIT_CODE = 4;

const FORMATS = ['text', 'markdown', 'json'] as const;

async function gate(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    argv,
    {
      baseline: { type: 'string' },
      candidate: { type: 'string' },
      require: { type: 'string', short: 'r', multiple: true },
      config: { type: 'string' },
      alpha: { type: 'string' },
      format: { type: 'string' },
      junit: { type: 'string' },
      outputs: { type: 'string' },
      server: { type: 'string' },
      token: { type: 'string' },
    },
    USAGE,
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (positionals.length > 0) throw new BadInputError(`unexpected argument "${positionals[0]}"; ${USAGE}`);
  if (!values.baseline || !values.candidate) throw new BadInputError(`give --baseline and --candidate; ${USAGE}`);
  const format = values.json === true ? 'json' : (values.format ?? 'text');
  if (!(FORMATS as readonly string[]).includes(format))
    throw new BadInputError(`--format must be one of ${FORMATS.join(', ')}, got "${format}"`);
  const config = values.config ? await readGateConfig(values.config) : {};
  let alpha = config.alpha;
  if (values.alpha !== undefined) {
    alpha = Number(values.alpha);
    if (values.alpha.trim() === '' || !(alpha > 0 && alpha < 1))
      throw new BadInputError(`--alpha must be a number strictly between 0 and 1, got "${values.alpha}"`);
  }
  // Flags win over the config's list as a whole: a CI job can tighten one gate without editing the file.
  const texts = values.require && values.require.length > 0 ? values.require : (config.require ?? []);
  const requirements = texts.map(parseRequirement);
  if (values.server === undefined && values.token !== undefined) throw new BadInputError('--token needs --server URL');
  const result = values.server
    ? await remoteGate({
        server: values.server,
        token: values.token ?? (process.env.EVAL_API_TOKEN || undefined),
        baseline: values.baseline,
        candidate: values.candidate,
        requirements: texts,
        alpha,
      })
    : await localGate(values.baseline, values.candidate, values.outputs ?? DEFAULT_OUTPUTS_DIR, requirements, alpha);
  if (values.junit) await writeFile(values.junit, gateJunitXml(result));
  process.stdout.write(
    format === 'json'
      ? JSON.stringify(result, null, 2) + '\n'
      : format === 'markdown'
        ? renderGateMarkdown(result)
        : renderGateText(result),
  );
  return GATE_VERDICTS.indexOf(result.verdict);
}

/** The gate over two runs in outputs folders (ids under `outputs`, or run directories). */
async function localGate(
  baselineArg: string,
  candidateArg: string,
  outputs: string,
  requirements: GateRequirement[],
  alpha: number | undefined,
): Promise<GateResult> {
  const refs = [baselineArg, candidateArg].map((arg) => {
    const ref = runRefOf(arg, outputs);
    return { reader: new RunReader(ref.outputsDir), runId: ref.runId };
  });
  assertDistinctRuns(refs.map((r) => ({ key: resolve(r.reader.runDir(r.runId)), runId: r.runId })));
  const [baseline, candidate] = await Promise.all(refs.map((r) => readRunScores(r.reader, r.runId)));
  return gateVerdicts(baseline!, candidate!, { requirements, alpha });
}

export async function run(argv: string[]): Promise<number> {
  try {
    return await gate(argv);
  } catch (err) {
    // Errors exit 3 or more, apart from the verdicts' 0, 1 and 2, which a CI job branches on.
    process.stderr.write(`evalctl gate: ${errorMessage(err)}\n`);
    return isInputFault((err as { code?: string }).code) ? GATE_INPUT_ERROR_EXIT_CODE : GATE_OTHER_ERROR_EXIT_CODE;
  }
}
