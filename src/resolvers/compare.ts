/**
 * Paired comparison over the API: `compareRuns` (a baseline against candidates, per metric the
 * paired difference and its interval beside the unpaired one, McNemar, flips, BH flags) and
 * `powerPlan` (minimum detectable effect and episodes needed). docs/statistics.md says what
 * each number means.
 */
import type { CandidateComparison, FlippedEpisode, MetricComparison } from '../compare/compare-runs.js';
import { comparisonWarnings } from '../compare/comparison-warnings.js';
import type { PowerPlan, MetricPower } from '../compare/power-plan.js';
import { builder } from './builder.js';
import { EpisodeRef, RunRef, type EpisodeSource } from './refs.js';
import { CiMethodRef, MetricGoalRef, MetricVerdictRef, TestMethodRef } from './stats-refs.js';
import { compareRunsById, powerPlanById, runSource, type RunComparisonSource } from './compare-source.js';
import { loadRun, loadSummary } from './run-source.js';
import type { ApiContext } from './context.js';

const finite = (v: number | null | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** One episode's record: its own episode.json (small), else the run's summary. */
async function episodeOf(runId: string, index: number, ctx: ApiContext): Promise<EpisodeSource | null> {
  const own = await ctx.runs.readEpisode(runId, index).catch(() => null);
  if (own) return { runId, record: own };
  const src = await loadRun(runId, ctx);
  const record = (await loadSummary(src, ctx))?.episodes.find((e) => e.index === index);
  return record ? { runId, record } : null;
}

interface FlipSource {
  flip: FlippedEpisode;
  baselineRunId: string;
  candidateRunId: string;
}

const FlipDirectionRef = builder.enumType('FlipDirection', {
  description: 'Which way a 0/1 metric flipped between the baseline and the candidate.',
  values: {
    GAINED: { value: 'gained' as const, description: 'Baseline 0, candidate 1 (the candidate got it right).' },
    LOST: { value: 'lost' as const, description: 'Baseline 1, candidate 0 (the candidate got it wrong).' },
  },
});

const FlippedEpisodeRef = builder.objectRef<FlipSource>('FlippedEpisode').implement({
  description: 'An episode whose 0/1 metric differs between the two runs, with both records.',
  fields: (t) => ({
    episodeId: t.string({
      description: 'What both records evaluate (the env episode or dataset sample).',
      resolve: (f) => f.flip.episodeId,
    }),
    direction: t.field({ type: FlipDirectionRef, description: 'Gained or lost by the candidate.', resolve: (f) => f.flip.direction }),
    baselineIndex: t.int({ description: "The episode's index in the baseline run.", resolve: (f) => f.flip.baselineIndex }),
    candidateIndex: t.int({ description: "The episode's index in the candidate run.", resolve: (f) => f.flip.candidateIndex }),
    baselineValue: t.float({ description: "The baseline's value (mean over repeats).", resolve: (f) => f.flip.baselineValue }),
    candidateValue: t.float({ description: "The candidate's value (mean over repeats).", resolve: (f) => f.flip.candidateValue }),
    baselineEpisode: t.field({
      type: EpisodeRef,
      nullable: true,
      description: "The baseline's record (its pictures, log, metrics).",
      resolve: (f, _a, ctx) => episodeOf(f.baselineRunId, f.flip.baselineIndex, ctx),
    }),
    candidateEpisode: t.field({
      type: EpisodeRef,
      nullable: true,
      description: "The candidate's record.",
      resolve: (f, _a, ctx) => episodeOf(f.candidateRunId, f.flip.candidateIndex, ctx),
    }),
  }),
});

export interface MetricComparisonSource {
  m: MetricComparison;
  baselineRunId: string;
  candidateRunId: string;
}

export const MetricComparisonRef = builder.objectRef<MetricComparisonSource>('MetricComparison').implement({
  description:
    'One metric, candidate − baseline, over the episodes both runs have (paired by episodeId). Intervals are 95 %; null where there are too few pairs.',
  fields: (t) => ({
    metric: t.string({ description: 'The metric name.', resolve: (s) => s.m.metric }),
    n: t.int({ description: 'Pairs compared: shared episodes where both sides count for this metric.', resolve: (s) => s.m.n }),
    excludedPairs: t.int({
      description: 'Shared episodes left out: an ending that does not count (docs/statistics.md) or the metric missing, on either side.',
      resolve: (s) => s.m.excludedPairs,
    }),
    binary: t.boolean({
      description: "True when every value on both sides is 0 or 1 and the metric's declared range allows a rate.",
      resolve: (s) => s.m.binary,
    }),
    baselineMean: t.float({ nullable: true, description: "The baseline's mean over the pairs.", resolve: (s) => finite(s.m.baselineMean) }),
    candidateMean: t.float({
      nullable: true,
      description: "The candidate's mean over the pairs.",
      resolve: (s) => finite(s.m.candidateMean),
    }),
    meanDiff: t.float({
      nullable: true,
      description: 'Mean of candidate − baseline over the pairs.',
      resolve: (s) => finite(s.m.meanDiff),
    }),
    pairedStderr: t.float({
      nullable: true,
      description: 'Standard error of meanDiff from the per-episode differences (clustered when episodes carry clusters).',
      resolve: (s) => finite(s.m.pairedStderr),
    }),
    ci95Low: t.float({
      nullable: true,
      description: 'Paired 95 % interval of meanDiff, lower end.',
      resolve: (s) => finite(s.m.ci95?.[0]),
    }),
    ci95High: t.float({
      nullable: true,
      description: 'Paired 95 % interval of meanDiff, upper end.',
      resolve: (s) => finite(s.m.ci95?.[1]),
    }),
    ciMethod: t.field({
      type: CiMethodRef,
      description:
        'T (n−1 df), CLUSTERED_T (C−1 df), or NEWCOMBE for a difference of 0/1 rates where unclustered (or where the clustered t has no width).',
      resolve: (s) => s.m.ciMethod,
    }),
    df: t.int({ description: 'Degrees of freedom of the paired interval.', resolve: (s) => Math.max(0, s.m.df) }),
    clusters: t.int({
      nullable: true,
      description: 'Clusters among the pairs, when episodes carry one.',
      resolve: (s) => s.m.clusters ?? null,
    }),
    correlation: t.float({
      nullable: true,
      description:
        'Pearson correlation of the paired values: the higher, the more pairing narrows the interval. Null when a side is constant.',
      resolve: (s) => finite(s.m.correlation),
    }),
    unpairedStderr: t.float({
      nullable: true,
      description:
        "Standard error as if the runs shared no episodes (Welch), for contrast: √(SE_A² + SE_B²), each side's clustered standard error where episodes carry clusters.",
      resolve: (s) => finite(s.m.unpairedStderr),
    }),
    unpairedCi95Low: t.float({
      nullable: true,
      description:
        'Unpaired (Welch) 95 % interval, lower end (clustered sides, Satterthwaite degrees of freedom, where episodes carry clusters).',
      resolve: (s) => finite(s.m.unpairedCi95?.[0]),
    }),
    unpairedCi95High: t.float({
      nullable: true,
      description: 'Unpaired (Welch) 95 % interval, upper end.',
      resolve: (s) => finite(s.m.unpairedCi95?.[1]),
    }),
    pValue: t.float({
      nullable: true,
      description:
        "Two-sided p behind the BH flag (testMethod): McNemar's for 0/1 metrics, else the paired t test; each clustered when episodes carry clusters.",
      resolve: (s) => finite(s.m.testP),
    }),
    testMethod: t.field({ type: TestMethodRef, description: 'The test behind pValue.', resolve: (s) => s.m.testMethod }),
    designEffect: t.float({
      nullable: true,
      description:
        'Clustered over unclustered variance of the paired mean, never below 1 (1 without clusters); the MDE and a plan are scaled by it.',
      resolve: (s) => finite(s.m.designEffect),
    }),
    pairedTP: t.float({
      nullable: true,
      description: 'Two-sided p of the paired t test, for every metric.',
      resolve: (s) => finite(s.m.pValue),
    }),
    mcnemarP: t.float({
      nullable: true,
      description: "McNemar's p (0/1 metrics only): exact, or Durkalski's cluster-adjusted test where episodes carry clusters.",
      resolve: (s) => finite(s.m.mcnemarP),
    }),
    goal: t.field({
      type: MetricGoalRef,
      nullable: true,
      description: 'Which way the metric is better, as both runs declare it; null when undeclared (wins then count the candidate higher).',
      resolve: (s) => s.m.goal,
    }),
    verdict: t.field({
      type: MetricVerdictRef,
      nullable: true,
      description: 'BETTER, WORSE or NO_DIFFERENCE by the goal, from the paired interval; null without a goal or an interval.',
      resolve: (s) => s.m.verdict,
    }),
    wins: t.int({
      description: 'Pairs where the candidate is better by the goal: higher for MAX (or no goal), lower for MIN.',
      resolve: (s) => s.m.wins,
    }),
    ties: t.int({ description: 'Pairs that are equal.', resolve: (s) => s.m.ties }),
    losses: t.int({ description: 'Pairs where the candidate is worse by the goal.', resolve: (s) => s.m.losses }),
    bhAdjustedP: t.float({
      nullable: true,
      description: 'Benjamini–Hochberg adjusted p over every metric × candidate of this comparison.',
      resolve: (s) => finite(s.m.bhAdjustedP),
    }),
    bhSignificant: t.boolean({
      description: 'Flagged by Benjamini–Hochberg at a false discovery rate of 5 % over every metric × candidate.',
      resolve: (s) => s.m.bhSignificant,
    }),
    mde: t.float({
      nullable: true,
      description:
        'Minimum detectable effect at this n (α = 0.05 two-sided, 80 % power) from the spread of the differences, times √designEffect.',
      resolve: (s) => finite(s.m.mde),
    }),
    flips: t.field({
      type: [FlippedEpisodeRef],
      description: 'Episodes whose 0/1 value differs between the runs, by baseline index (0/1 metrics only).',
      resolve: (s) => s.m.flips.map((flip) => ({ flip, baselineRunId: s.baselineRunId, candidateRunId: s.candidateRunId })),
    }),
  }),
});

interface CandidateSource {
  c: CandidateComparison;
  baselineRunId: string;
}

const CandidateComparisonRef = builder.objectRef<CandidateSource>('CandidateComparison').implement({
  description: 'One candidate run against the baseline.',
  fields: (t) => ({
    candidate: t.field({ type: RunRef, description: 'The candidate run.', resolve: (s, _a, ctx) => runSource(s.c.candidateRunId, ctx) }),
    overlap: t.int({ description: 'Episodes both runs have.', resolve: (s) => s.c.overlap }),
    baselineEpisodes: t.int({ description: 'Distinct episodes in the baseline.', resolve: (s) => s.c.baselineEpisodes }),
    candidateEpisodes: t.int({ description: 'Distinct episodes in the candidate.', resolve: (s) => s.c.candidateEpisodes }),
    partial: t.boolean({ description: 'True when the runs only partly overlap: compared on the overlap.', resolve: (s) => s.c.partial }),
    note: t.string({
      nullable: true,
      description:
        'Says so when the comparison covers only the overlap, and names the metrics whose difference goes beyond what a double holds (their figures are null).',
      resolve: (s) => s.c.note,
    }),
    warnings: t.stringList({
      description:
        "How the two runs differ beyond their graph's shape (from their manifest.json): another model, endpoint or sampling parameter of a model-backed node, another model the provider reported answering, another project version or commit, nodeset code or manifest, dataset files, Node major or platform. Empty when none of these differ, or a run has no manifest.",
      resolve: (s, _a, ctx) => comparisonWarnings(ctx.runs.runDir(s.baselineRunId), ctx.runs.runDir(s.c.candidateRunId)),
    }),
    metrics: t.field({
      type: [MetricComparisonRef],
      description: 'Each metric compared, in the order of RunComparison.metrics.',
      resolve: (s) => s.c.metrics.map((m) => ({ m, baselineRunId: s.baselineRunId, candidateRunId: s.c.candidateRunId })),
    }),
  }),
});

const RunComparisonRef = builder.objectRef<RunComparisonSource>('RunComparison').implement({
  description: 'A baseline run against one or more candidates, paired by episode.',
  fields: (t) => ({
    baseline: t.field({
      type: RunRef,
      description: 'The baseline run.',
      resolve: (s, _a, ctx) => runSource(s.comparison.baselineRunId, ctx),
    }),
    metrics: t.stringList({ description: 'The metrics compared, in order.', resolve: (s) => s.comparison.metrics }),
    fdrLevel: t.float({ description: 'The false discovery rate of the Benjamini–Hochberg flags (0.05).', resolve: () => 0.05 }),
    candidates: t.field({
      type: [CandidateComparisonRef],
      description: 'One entry per candidate, in the order given.',
      resolve: (s) => s.comparison.candidates.map((c) => ({ c, baselineRunId: s.comparison.baselineRunId })),
    }),
  }),
});

const PowerSourceRef = builder.enumType('PowerSource', {
  description: 'Where the spread a power plan uses came from.',
  values: {
    PAIRED: {
      value: 'paired' as const,
      description: 'The per-episode differences against a comparable run (same graph, shared episodes), chosen per metric.',
    },
    OWN: {
      value: 'own' as const,
      description: "The run's own per-episode spread (no comparable run); a paired comparison will usually need fewer episodes.",
    },
  },
});

const MetricPowerRef = builder.objectRef<MetricPower>('MetricPower').implement({
  description: 'Power of one metric at α = 0.05 (two-sided) and 80 % power.',
  fields: (t) => ({
    metric: t.exposeString('metric', { description: 'The metric name.' }),
    n: t.exposeInt('n', { description: 'Episodes (or pairs) the spread came from: the MDE is at this n.' }),
    sd: t.float({ nullable: true, description: 'Standard deviation used (of the differences when PAIRED).', resolve: (p) => finite(p.sd) }),
    designEffect: t.float({
      nullable: true,
      description:
        'Clustered over independent variance of the mean, never below 1 (1 without clusters): the MDE and episodesNeeded include it.',
      resolve: (p) => finite(p.designEffect),
    }),
    clusters: t.int({
      nullable: true,
      description: 'Clusters among the episodes, when they carry one.',
      resolve: (p) => p.clusters ?? null,
    }),
    reference: t.field({
      type: RunRef,
      nullable: true,
      description:
        "The run this metric's differences are against (the comparable run sharing the most episodes with a difference); null for the run's own spread.",
      resolve: (p, _a, ctx) => (p.referenceRunId ? loadRun(p.referenceRunId, ctx) : null),
    }),
    mde: t.float({ nullable: true, description: 'Minimum detectable effect at n, with the design effect.', resolve: (p) => finite(p.mde) }),
    effect: t.float({ nullable: true, description: 'The effect asked about, if any.', resolve: (p) => p.effect ?? null }),
    episodesNeeded: t.int({
      nullable: true,
      description:
        'Episodes needed to detect `effect`; null when there is no effect, or when the count is beyond what an Int holds (2³¹ − 1).',
      // A tiny effect against a wide spread needs more episodes than GraphQL's Int carries: null, not a field error.
      resolve: (p) =>
        p.episodesNeeded !== undefined && Number.isSafeInteger(p.episodesNeeded) && p.episodesNeeded <= 2 ** 31 - 1
          ? p.episodesNeeded
          : null,
    }),
  }),
});

const PowerPlanRef = builder.objectRef<PowerPlan>('PowerPlan').implement({
  description: 'How small a difference a run can tell apart, and how many episodes a given one needs.',
  fields: (t) => ({
    run: t.field({ type: RunRef, description: 'The run planned for.', resolve: (p, _a, ctx) => loadRun(p.runId, ctx) }),
    source: t.field({ type: PowerSourceRef, description: 'Paired against a comparable run, or its own spread.', resolve: (p) => p.source }),
    reference: t.field({
      type: RunRef,
      nullable: true,
      description: "The first paired metric's reference (PAIRED only); each metric names its own.",
      resolve: (p, _a, ctx) => (p.referenceRunId ? loadRun(p.referenceRunId, ctx) : null),
    }),
    metrics: t.field({ type: [MetricPowerRef], description: 'Each metric, sorted by name.', resolve: (p) => p.metrics }),
  }),
});

builder.queryFields((t) => ({
  compareRuns: t.field({
    type: RunComparisonRef,
    description:
      'Paired comparison of candidates against a baseline, episodes aligned by episodeId. BAD_USER_INPUT when a candidate shares no episode with the baseline, no candidate is given, or a run is given twice (as two candidates, or as the baseline and a candidate); NOT_FOUND for an unknown run.',
    args: {
      baseline: t.arg.id({ required: true, description: 'The baseline run id.' }),
      candidates: t.arg.idList({ required: true, description: 'Candidate run ids (at least one).' }),
      metrics: t.arg.stringList({ description: 'Metrics to compare (default: every metric either side reports).' }),
    },
    resolve: (_root, args, ctx) => compareRunsById(String(args.baseline), args.candidates.map(String), args.metrics ?? undefined, ctx),
  }),
  powerPlan: t.field({
    type: PowerPlanRef,
    description:
      'Minimum detectable effect (α = 0.05, 80 % power) at the run’s n, and the episodes needed for `effect`, from the paired spread against a comparable run chosen per metric (same graph, the most shared episodes with a difference), else the run’s own spread; with the design effect where episodes carry clusters.',
    args: {
      run: t.arg.id({ required: true, description: 'The run id.' }),
      effect: t.arg.float({ description: 'An effect (difference of means) to size for.' }),
      metrics: t.arg.stringList({ description: 'Metrics (default: all the run reports).' }),
    },
    resolve: (_root, args, ctx) => powerPlanById(String(args.run), args.effect ?? undefined, args.metrics ?? undefined, ctx),
  }),
}));
