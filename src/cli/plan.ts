/**
 * `evalctl plan <run> [--effect X] [--metric m …] [--outputs DIR] [--json]`: how small a
 * difference the run's episode count can detect (α = 0.05 two-sided, 80 % power), and the
 * episodes a given effect needs, from the paired spread against the latest comparable run
 * (same graph, shared episodes), else from the run's own spread.
 */
import { powerPlan, type PowerPlan } from '../compare/power-plan.js';
import { latestComparableRun, readRunScores } from '../compare/run-scores.js';
import { BadInputError } from '../errors.js';
import { DEFAULT_OUTPUTS_DIR } from '../paths.js';
import { RunReader } from '../store/run-reader.js';
import { runRefOf } from './run-dir-arg.js';
import { parseCommandArgs } from './args.js';
import { textTable } from './text-table.js';
import { RUN_LIMITS } from '../spec/run-spec.js';

const USAGE = 'usage: evalctl plan <run-id | run-dir> [--effect X] [--metric NAME …] [--outputs DIR] [--json]';

const num = (v: number | undefined): string => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(4) : '–');

export function renderPlan(p: PowerPlan): string {
  const lines = [
    p.source === 'paired'
      ? `run ${p.runId}: paired against ${p.referenceRunId} (the latest finished run of the same graph sharing its episodes)`
      : `run ${p.runId}: its own spread (no comparable run found; a paired comparison usually needs fewer episodes)`,
  ];
  const withEffect = p.metrics.some((m) => m.effect !== undefined);
  const rows = [
    ['metric', 'n', 'sd', 'MDE', ...(withEffect ? ['effect', 'n needed'] : [])],
    ...p.metrics.map((m) => [
      m.metric,
      String(m.n),
      num(m.sd),
      num(m.mde),
      ...(withEffect ? [num(m.effect), m.episodesNeeded === undefined ? '–' : String(m.episodesNeeded)] : []),
    ]),
  ];
  lines.push(...textTable(rows));
  lines.push('MDE: the smallest true difference detected 80 % of the time at α = 0.05 (two-sided) with n episodes.');
  const flat = p.metrics.filter((m) => m.sd === 0);
  if (flat.length > 0) {
    lines.push(
      `${flat.map((m) => m.metric).join(', ')}: sd 0 (${p.source === 'paired' ? 'the same difference on every shared episode' : 'the same value in every episode'}), so the MDE reads 0 and the plan cannot size a run from it; a larger or different sample may show a spread.`,
    );
  }
  const beyond = p.metrics.filter((m) => m.episodesNeeded !== undefined && m.episodesNeeded > RUN_LIMITS.maxEpisodes);
  if (beyond.length > 0) {
    lines.push(
      `${beyond.map((m) => m.metric).join(', ')}: more episodes than one run takes (${RUN_LIMITS.maxEpisodes}); pool several runs over other episodes, or plan for a larger effect.`,
    );
  }
  return lines.join('\n') + '\n';
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    argv,
    {
      effect: { type: 'string' },
      metric: { type: 'string', short: 'm', multiple: true },
      outputs: { type: 'string' },
    },
    USAGE,
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new BadInputError(`give one run (its id or its directory); ${USAGE}`);
  let effect: number | undefined;
  if (values.effect !== undefined) {
    effect = Number(values.effect);
    if (values.effect.trim() === '' || !Number.isFinite(effect) || effect === 0)
      throw new BadInputError(`--effect must be a non-zero number, got "${values.effect}"`);
  }
  const ref = runRefOf(positionals[0]!, values.outputs ?? DEFAULT_OUTPUTS_DIR);
  const reader = new RunReader(ref.outputsDir);
  const target = await readRunScores(reader, ref.runId);
  const reference = await latestComparableRun(reader, target);
  const plan = powerPlan(target, reference, { effect, metrics: values.metric });
  process.stdout.write(values.json === true ? JSON.stringify(plan, null, 2) + '\n' : renderPlan(plan));
  return 0;
}
