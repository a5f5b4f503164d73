/**
 * The gate's verdicts: for a candidate run against a baseline, per metric, whether the paired
 * difference meets what is asked of it (gate-requirement.ts) — `pass`, `fail`, or
 * `inconclusive` while its anytime-valid interval still straddles the bound. Episodes pair as
 * compareRuns pairs them; the difference is read in the baseline's index order by the
 * sequential tests (stats/sequential-test.ts), so the verdict is the one a watcher who looked
 * after every episode would have been entitled to. Several metrics: Holm's step-down over the
 * metrics keeps the chance of any wrong pass or fail at most α; the gate passes only when
 * every metric passes. Pure: the same scores give the same verdicts.
 */
import { BadInputError } from '../errors.js';
import type { MetricGoal, MetricRange } from '../core/types.js';
import { heldRange, isBinary, mayBeRate, meanAndSd } from '../stats/intervals.js';
import { DEFAULT_ALPHA, episodesForEffect, minimumDetectableEffect } from '../stats/power.js';
import { SequentialTest, sequenceInterval, type SequenceMethod } from '../stats/sequential-test.js';
import { pairMetric, type ScoredRun } from './compare-runs.js';
import {
  checkAgainstGoal,
  defaultRequirement,
  requirementVerdict,
  thresholdsOf,
  type GateQuestion,
  type GateRequirement,
  type GateVerdict,
} from './gate-requirement.js';
import { orderMetrics } from './metric-order.js';

export type { GateVerdict };

/** The three verdicts, in the order of their exit codes (0, 1, 2). */
export const GATE_VERDICTS = ['pass', 'fail', 'inconclusive'] as const satisfies readonly GateVerdict[];

export interface MetricGateVerdict {
  metric: string;
  requirement: string;
  question: GateQuestion;
  margin: number;
  goal: MetricGoal | null;
  verdict: GateVerdict;
  /** Pairs read (in index order) before the verdict was reached; null while inconclusive. */
  decidedAt: number | null;
  /** Pairs compared. */
  n: number;
  baselineMean: number | null;
  candidateMean: number | null;
  /** Mean of candidate − baseline. */
  meanDiff: number | null;
  /** The anytime-valid interval of candidate − baseline at `level` after every pair; null where there is none yet. */
  interval: [number, number] | null;
  method: SequenceMethod;
  /** The error level this metric was judged at: α/k at Holm's step k. */
  level: number;
  /** The fixed-n minimum detectable effect at this n (two-sided α, 80 % power, the paired spread). */
  mde: number | null;
  /** Episodes a fixed-n plan would need to tell the observed difference from the bound (α, 80 % power); null when decided or the difference sits on the bound. */
  episodesNeeded: number | null;
  excludedPairs: number;
  /** Why the verdict is what it is, in a sentence. */
  reason: string;
}

export interface GateResult {
  baselineRunId: string;
  candidateRunId: string;
  alpha: number;
  /** How several metrics share α. */
  correction: 'holm';
  verdict: GateVerdict;
  metrics: MetricGateVerdict[];
  notes: string[];
}

export interface GateOptions {
  /** What each metric must meet; by default every metric with a declared goal must beat the baseline. */
  requirements?: readonly GateRequirement[] | undefined;
  /** The chance of any wrong pass or fail over all the metrics together. @default 0.05 */
  alpha?: number | undefined;
}

/** What a difference of the metric cannot leave: [−1, 1] for 0/1 rates, ± the width of a range both sides keep to; null when unbounded. */
function differenceBounds(base: readonly number[], cand: readonly number[], range: MetricRange | undefined): [number, number] | null {
  if (mayBeRate(range) && isBinary(base) && isBinary(cand)) return [-1, 1];
  const held = heldRange(base, range) && heldRange(cand, range);
  if (held?.min === undefined || held.max === undefined || !(held.max > held.min)) return null;
  return [held.min - held.max, held.max - held.min];
}

type Outcome = ReturnType<typeof requirementVerdict>;

/** The verdict one metric's differences reach at `level`. */
function outcomeAt(diffs: readonly number[], r: GateRequirement, bounds: [number, number] | null, level: number): Outcome {
  const test = new SequentialTest(thresholdsOf(r), { alpha: level, bounds });
  for (let i = 0; i < diffs.length; i++) test.push(diffs[i]!);
  return requirementVerdict(test.thresholds(), r);
}

interface Prepared {
  r: GateRequirement;
  goal: MetricGoal | null;
  base: number[];
  cand: number[];
  diffs: number[];
  bounds: [number, number] | null;
  excludedPairs: number;
  clustered: boolean;
}

function prepare(baseline: ScoredRun, candidate: ScoredRun, r: GateRequirement): Prepared {
  const known = new Set([...baseline.scores.metrics, ...candidate.scores.metrics]);
  if (!known.has(r.metric))
    throw new BadInputError(`requirement "${r.text}": neither run reports a metric "${r.metric}" (they report ${[...known].join(', ')})`);
  const p = pairMetric(baseline, candidate, r.metric);
  const goal = p.range?.goal ?? null;
  checkAgainstGoal(r, goal);
  const diffs = p.baseline.map((b, i) => p.candidate[i]! - b);
  const bounds = differenceBounds(p.baseline, p.candidate, p.range);
  if (bounds)
    for (const t of thresholdsOf(r))
      if (!(t > bounds[0] && t < bounds[1]))
        throw new BadInputError(
          `requirement "${r.text}": the bound ${t} lies outside what candidate − baseline can be for ${r.metric} (${bounds[0]} to ${bounds[1]})`,
        );
  return { r, goal, base: p.baseline, cand: p.candidate, diffs, bounds, excludedPairs: p.excludedPairs, clustered: p.clustered };
}

/** The requirements to judge: those given (each metric once), else `metric > 0` (or `< 0`) for every metric with a goal. */
function requirementsOf(baseline: ScoredRun, candidate: ScoredRun, given: readonly GateRequirement[] | undefined): GateRequirement[] {
  if (given && given.length > 0) {
    const seen = new Set<string>();
    for (const r of given) {
      if (seen.has(r.metric)) throw new BadInputError(`metric ${r.metric} has two requirements; give each metric one`);
      seen.add(r.metric);
    }
    return [...given];
  }
  const ranges = { ...candidate.scores.metricRanges, ...baseline.scores.metricRanges };
  const names = orderMetrics([...new Set([...baseline.scores.metrics, ...candidate.scores.metrics])], ranges);
  const out = names.flatMap((m) => {
    const goal = baseline.scores.metricRanges?.[m]?.goal;
    return goal !== undefined && candidate.scores.metricRanges?.[m]?.goal === goal ? [defaultRequirement(m, goal)] : [];
  });
  if (out.length === 0)
    throw new BadInputError(
      'no metric of these runs declares a goal (higher or lower is better): say what to require, e.g. --require "success >= -0.02" or a gate.toml',
    );
  return out;
}

function reasonOf(p: Prepared, o: Outcome, level: number): string {
  const pct = `${+(100 * (1 - level)).toFixed(3)} %`;
  if (o.verdict === 'inconclusive')
    return p.diffs.length === 0
      ? 'no episode has a value of this metric in both runs'
      : `the ${pct} anytime-valid interval still straddles the bound after ${p.diffs.length} pairs`;
  return `decided at pair ${o.at}: the ${pct} anytime-valid interval lies ${o.verdict === 'pass' ? 'on the required side of' : 'past'} the bound`;
}

/** The fixed-n episodes to tell `meanDiff` from the requirement's bound (α two-sided, 80 % power); null on the bound. */
function episodesToTell(r: GateRequirement, meanDiff: number, sd: number, alpha: number): number | null {
  const distance = r.direction === null ? Math.abs(r.margin - Math.abs(meanDiff)) : Math.abs(meanDiff - r.threshold);
  if (!(distance > 0) || !Number.isFinite(sd)) return null;
  return episodesForEffect(sd, distance, alpha);
}

/**
 * The verdicts of `candidate` against `baseline`. BAD_USER_INPUT for a requirement naming no
 * reported metric, one asking a metric to move against its goal, a bound a bounded metric's
 * difference cannot reach, or (no requirements given) no metric with a goal.
 */
export function gateVerdicts(baseline: ScoredRun, candidate: ScoredRun, opts: GateOptions = {}): GateResult {
  const alpha = opts.alpha ?? DEFAULT_ALPHA;
  if (!(alpha > 0 && alpha < 1)) throw new BadInputError(`alpha must lie strictly between 0 and 1, got ${alpha}`);
  const prepared = requirementsOf(baseline, candidate, opts.requirements).map((r) => prepare(baseline, candidate, r));
  const m = prepared.length;
  // Holm's step-down: at each step the metrics still open are tested at α/(open count); those decided leave; until none does.
  const judged = new Map<number, { outcome: Outcome; level: number }>();
  for (;;) {
    const level = alpha / (m - judged.size);
    let any = false;
    const found: Array<[number, Outcome]> = [];
    prepared.forEach((p, i) => {
      if (judged.has(i)) return;
      const o = outcomeAt(p.diffs, p.r, p.bounds, level);
      if (o.verdict !== 'inconclusive') found.push([i, o]);
    });
    for (const [i, outcome] of found) {
      judged.set(i, { outcome, level });
      any = true;
    }
    if (!any || judged.size === m) break;
  }
  const openLevel = alpha / Math.max(1, m - judged.size);
  const metrics = prepared.map((p, i): MetricGateVerdict => {
    const j = judged.get(i);
    const outcome = j?.outcome ?? { verdict: 'inconclusive' as const, at: null };
    const level = j?.level ?? openLevel;
    const n = p.diffs.length;
    const d = meanAndSd(p.diffs);
    const fin = (v: number): number | null => (Number.isFinite(v) ? v : null);
    const mde = n > 1 ? fin(minimumDetectableEffect(d.sd, n, alpha)) : null;
    return {
      metric: p.r.metric,
      requirement: p.r.text,
      question: p.r.question,
      margin: p.r.margin,
      goal: p.goal,
      verdict: outcome.verdict,
      decidedAt: outcome.at,
      n,
      baselineMean: n > 0 ? fin(meanAndSd(p.base).mean) : null,
      candidateMean: n > 0 ? fin(meanAndSd(p.cand).mean) : null,
      meanDiff: n > 0 ? fin(d.mean) : null,
      interval: n > 0 ? sequenceInterval(p.diffs, { alpha: level, bounds: p.bounds }) : null,
      method: p.bounds ? 'betting' : 'asymptotic',
      level,
      mde,
      episodesNeeded: outcome.verdict === 'inconclusive' && n > 1 ? episodesToTell(p.r, d.mean, d.sd, alpha) : null,
      excludedPairs: p.excludedPairs,
      reason: reasonOf(p, outcome, level),
    };
  });
  const verdict: GateVerdict = metrics.some((x) => x.verdict === 'fail')
    ? 'fail'
    : metrics.every((x) => x.verdict === 'pass')
      ? 'pass'
      : 'inconclusive';
  const notes: string[] = [];
  const clustered = prepared.filter((p) => p.clustered).map((p) => p.r.metric);
  if (clustered.length > 0)
    notes.push(
      `${clustered.join(', ')}: episodes carry clusters, which the sequential tests treat as independent pairs (the error rate holds only where clusters are small)`,
    );
  const asymptotic = metrics.filter((x) => x.method === 'asymptotic').map((x) => x.metric);
  if (asymptotic.length > 0)
    notes.push(
      `${asymptotic.join(', ')}: no declared range, so the interval is the asymptotic one (valid as the pair count grows; declare the metric's min and max for one valid at every count)`,
    );
  return { baselineRunId: baseline.runId, candidateRunId: candidate.runId, alpha, correction: 'holm', verdict, metrics, notes };
}
