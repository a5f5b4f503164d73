/**
 * `gate(baseline, candidate, requirements, alpha)`: the verdicts `evalctl gate` prints
 * (compare/gate-verdicts.ts) over the API. docs/statistics.md ("Anytime-valid comparisons and
 * the gate") says what each number means.
 */
import { parseRequirement } from '../compare/gate-requirement.js';
import { gateVerdicts, type GateResult, type MetricGateVerdict } from '../compare/gate-verdicts.js';
import { assertDistinctRuns } from '../compare/compare-runs.js';
import { BadInputError } from '../errors.js';
import { builder } from './builder.js';
import { runScores, runSource } from './compare-source.js';
import { RunRef } from './refs.js';
import { MetricGoalRef } from './stats-refs.js';

/** Most requirements one gate takes. */
const MAX_REQUIREMENTS = 100;

const finite = (v: number | null | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export const GateVerdictRef = builder.enumType('GateVerdict', {
  description: 'What the gate concludes: `evalctl gate` exits 0, 1 or 2 on these.',
  values: {
    PASS: { value: 'pass' as const, description: 'The anytime-valid interval lies on the required side of the bound.' },
    FAIL: { value: 'fail' as const, description: 'The interval lies past the bound: the requirement is shown not met.' },
    INCONCLUSIVE: { value: 'inconclusive' as const, description: 'The interval still straddles the bound: more episodes are needed.' },
  },
});

const GateQuestionRef = builder.enumType('GateQuestion', {
  description: 'What a requirement asks of candidate − baseline.',
  values: {
    SUPERIORITY: { value: 'superiority' as const, description: 'Better than the baseline (by at least the margin).' },
    NON_INFERIORITY: { value: 'non-inferiority' as const, description: 'Not worse than the baseline by more than the margin.' },
    EQUIVALENCE: { value: 'equivalence' as const, description: 'Within ±margin of the baseline.' },
  },
});

const SequenceMethodRef = builder.enumType('SequenceMethod', {
  description: 'The anytime-valid interval behind a verdict.',
  values: {
    BETTING: {
      value: 'betting' as const,
      description: 'Betting confidence sequence (Waudby-Smith & Ramdas 2023): a bounded metric; valid at every n.',
    },
    ASYMPTOTIC: {
      value: 'asymptotic' as const,
      description: 'Asymptotic normal-mixture sequence (Waudby-Smith et al. 2024): a metric with no declared range; valid as n grows.',
    },
  },
});

const MetricGateVerdictRef = builder.objectRef<MetricGateVerdict>('MetricGateVerdict').implement({
  description: 'One metric of a gate: its requirement, the anytime-valid interval of candidate − baseline, and the verdict.',
  fields: (t) => ({
    metric: t.exposeString('metric', { description: 'The metric name.' }),
    requirement: t.exposeString('requirement', { description: 'The requirement as written, e.g. `success >= -0.02`.' }),
    question: t.field({ type: GateQuestionRef, description: 'What the requirement asks.', resolve: (m) => m.question }),
    margin: t.exposeFloat('margin', { description: 'How far past 0 the bound lies, in the metric’s unit.' }),
    goal: t.field({
      type: MetricGoalRef,
      nullable: true,
      description: 'Which way the metric is better, as both runs declare it.',
      resolve: (m) => m.goal,
    }),
    verdict: t.field({ type: GateVerdictRef, description: 'PASS, FAIL or INCONCLUSIVE.', resolve: (m) => m.verdict }),
    decidedAt: t.int({
      nullable: true,
      description: 'Pairs read in episode order when the verdict was reached; null while inconclusive.',
      resolve: (m) => m.decidedAt,
    }),
    n: t.exposeInt('n', { description: 'Pairs compared.' }),
    excludedPairs: t.exposeInt('excludedPairs', {
      description: 'Shared episodes left out (an ending not counted, or the metric missing).',
    }),
    baselineMean: t.float({ nullable: true, description: "The baseline's mean over the pairs.", resolve: (m) => finite(m.baselineMean) }),
    candidateMean: t.float({
      nullable: true,
      description: "The candidate's mean over the pairs.",
      resolve: (m) => finite(m.candidateMean),
    }),
    meanDiff: t.float({ nullable: true, description: 'Mean of candidate − baseline.', resolve: (m) => finite(m.meanDiff) }),
    intervalLow: t.float({
      nullable: true,
      description: 'Anytime-valid interval of candidate − baseline at `level`, lower end.',
      resolve: (m) => finite(m.interval?.[0]),
    }),
    intervalHigh: t.float({ nullable: true, description: 'Anytime-valid interval, upper end.', resolve: (m) => finite(m.interval?.[1]) }),
    method: t.field({ type: SequenceMethodRef, description: 'The sequence behind the interval.', resolve: (m) => m.method }),
    level: t.exposeFloat('level', { description: 'The error level the metric was judged at: α/k at step k of Holm’s procedure.' }),
    mde: t.float({
      nullable: true,
      description: 'Minimum detectable effect of a fixed-n test at this n (α two-sided, 80 % power).',
      resolve: (m) => finite(m.mde),
    }),
    episodesNeeded: t.int({
      nullable: true,
      description:
        'Inconclusive only: episodes a fixed-n plan would need to tell the observed difference from the bound (α, 80 % power); null beyond an Int.',
      resolve: (m) => (m.episodesNeeded !== null && m.episodesNeeded <= 2 ** 31 - 1 ? m.episodesNeeded : null),
    }),
    reason: t.exposeString('reason', { description: 'Why the verdict is what it is, in a sentence.' }),
  }),
});

const GateResultRef = builder.objectRef<GateResult>('GateResult').implement({
  description: 'A candidate run against a baseline: per metric a verdict, and the gate’s (PASS only when every metric passes).',
  fields: (t) => ({
    baseline: t.field({ type: RunRef, description: 'The baseline run.', resolve: (g, _a, ctx) => runSource(g.baselineRunId, ctx) }),
    candidate: t.field({ type: RunRef, description: 'The candidate run.', resolve: (g, _a, ctx) => runSource(g.candidateRunId, ctx) }),
    alpha: t.exposeFloat('alpha', { description: 'The chance of any wrong PASS or FAIL over all the metrics together.' }),
    correction: t.exposeString('correction', { description: 'How the metrics share α: `holm` (Holm’s step-down).' }),
    verdict: t.field({
      type: GateVerdictRef,
      description: 'FAIL if any metric fails, PASS if all pass, else INCONCLUSIVE.',
      resolve: (g) => g.verdict,
    }),
    metrics: t.field({ type: [MetricGateVerdictRef], description: 'One entry per requirement, in order.', resolve: (g) => g.metrics }),
    notes: t.stringList({ description: 'What limits the verdicts (clustered episodes, asymptotic intervals).', resolve: (g) => g.notes }),
  }),
});

builder.queryFields((t) => ({
  gate: t.field({
    type: GateResultRef,
    description:
      'Pass, fail or inconclusive: a candidate against a baseline, per metric, from anytime-valid intervals of the paired difference read in episode order (Holm over metrics). BAD_USER_INPUT for a requirement that cannot be read or names no reported metric, a bound against a metric’s goal or past its range, runs that share no episode, or no requirement with no metric declaring a goal; NOT_FOUND for an unknown run.',
    args: {
      baseline: t.arg.id({ required: true, description: 'The baseline run id.' }),
      candidate: t.arg.id({ required: true, description: 'The candidate run id.' }),
      requirements: t.arg.stringList({
        description:
          'Bounds on candidate − baseline: `success > 0`, `success >= -0.02`, `steps <= 2`, `|success| <= 0.02`. Default: every metric with a goal must beat the baseline.',
      }),
      alpha: t.arg.float({ description: 'The chance of any wrong PASS or FAIL over every metric. Default 0.05.' }),
    },
    resolve: async (_root, args, ctx) => {
      const texts = args.requirements ?? [];
      if (texts.length > MAX_REQUIREMENTS)
        throw new BadInputError(`gate takes at most ${MAX_REQUIREMENTS} requirements, got ${texts.length}`);
      const requirements = texts.map(parseRequirement);
      const [b, c] = [String(args.baseline), String(args.candidate)];
      assertDistinctRuns([b, c].map((runId) => ({ key: runId, runId })));
      const [base, cand] = await Promise.all([runScores(b, ctx), runScores(c, ctx)]);
      return gateVerdicts(base, cand, { requirements, alpha: args.alpha ?? undefined });
    },
  }),
}));
