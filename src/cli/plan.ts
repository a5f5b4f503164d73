/**
 * `evalctl plan <run> [--reference RUN] [--effect X | --effect METRIC=X | --effect METRIC=X% …]
 * [--metric m …] [--outputs DIR] [--json]`: how small a difference the run's episode count can
 * detect (α = 0.05 two-sided, 80 % power), and the episodes a given effect needs, from the paired
 * spread against a comparable run (same graph, shared episodes; chosen per metric unless
 * --reference names one), else from the run's own spread; scaled by the design effect where
 * episodes carry clusters.
 */
import { parseEffects, powerPlan, type PowerPlan } from '../compare/power-plan.js';
import { comparableRuns, readRunScores, type RunScores } from '../compare/run-scores.js';
import { BadInputError } from '../errors.js';
import { DEFAULT_OUTPUTS_DIR } from '../paths.js';
import { RunReader } from '../store/run-reader.js';
import { runRefOf } from './run-dir-arg.js';
import { parseCommandArgs } from './args.js';
import { textTable } from './text-table.js';
import { RUN_LIMITS } from '../spec/run-spec.js';

const USAGE =
  'usage: evalctl plan <run-id | run-dir> [--reference RUN] [--effect X | --effect METRIC=X | --effect METRIC=X% …] [--metric NAME …] [--outputs DIR] [--json]';

const num = (v: number | undefined): string => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(4) : '–');

export function renderPlan(p: PowerPlan, pinned = false): string {
  const refs = [...new Set(p.metrics.flatMap((m) => (m.referenceRunId ? [m.referenceRunId] : [])))];
  const lines = [
    refs.length === 0
      ? `run ${p.runId}: its own spread (no comparable run found; a paired comparison usually needs fewer episodes)`
      : pinned
        ? `run ${p.runId}: paired against ${refs[0]} (--reference)`
        : `run ${p.runId}: paired against ${refs.join(', ')} (per metric, the finished run of the same graph sharing the most of its episodes with a difference; --reference picks one)`,
  ];
  const withEffect = p.metrics.some((m) => m.effect !== undefined);
  const clustered = p.metrics.some((m) => m.designEffect > 1);
  const rows = [
    ['metric', 'reference', 'n', 'sd', ...(clustered ? ['deff', 'C'] : []), 'MDE', ...(withEffect ? ['effect', 'n needed'] : [])],
    ...p.metrics.map((m) => [
      m.metric,
      m.referenceRunId ?? '(own)',
      String(m.n),
      num(m.sd),
      ...(clustered ? [num(m.designEffect), m.clusters === undefined ? '–' : String(m.clusters)] : []),
      num(m.mde),
      ...(withEffect
        ? [
            m.effect === undefined
              ? '–'
              : `${num(m.effect)}${m.relativeEffect !== undefined ? ` (${+(m.relativeEffect * 100).toPrecision(6)} %)` : ''}`,
            m.episodesNeeded === undefined ? '–' : String(m.episodesNeeded),
          ]
        : []),
    ]),
  ];
  lines.push(...textTable(rows));
  lines.push('MDE: the smallest true difference detected 80 % of the time at α = 0.05 (two-sided) with n episodes.');
  if (clustered)
    lines.push(
      'deff: the design effect of clustered episodes (clustered over independent variance, never below 1); the MDE and n needed include it.',
    );
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
      effect: { type: 'string', multiple: true },
      reference: { type: 'string' },
      metric: { type: 'string', short: 'm', multiple: true },
      outputs: { type: 'string' },
    },
    USAGE,
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new BadInputError(`give one run (its id or its directory); ${USAGE}`);
  let effects: ReturnType<typeof parseEffects> | undefined;
  try {
    effects = values.effect ? parseEffects(values.effect) : undefined;
  } catch (e) {
    throw new BadInputError((e as Error).message);
  }
  const ref = runRefOf(positionals[0]!, values.outputs ?? DEFAULT_OUTPUTS_DIR);
  const reader = new RunReader(ref.outputsDir);
  const target = await readRunScores(reader, ref.runId);
  const pinned = values.reference !== undefined;
  let references: RunScores[];
  if (pinned) {
    const other = await readRunScores(reader, runRefOf(values.reference!, ref.outputsDir).runId);
    if (![...target.scores.episodes.keys()].some((id) => other.scores.episodes.has(id)))
      throw new BadInputError(`--reference ${other.runId} shares no episode with ${target.runId}; give a run over the same episodes`);
    references = [other];
  } else references = await comparableRuns(reader, target);
  const plan = powerPlan(target, references, { effects, metrics: values.metric, pinned });
  process.stdout.write(values.json === true ? JSON.stringify(plan, null, 2) + '\n' : renderPlan(plan, pinned));
  return 0;
}
