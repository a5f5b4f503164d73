/**
 * Paired comparison of runs: a baseline against candidates, episodes aligned by what they
 * evaluate (episodeId), per metric the paired difference with its interval beside the unpaired
 * one, McNemar and win/tie/loss for 0/1 metrics, the flipped episodes, and Benjamini–Hochberg
 * flags over every metric × candidate. Pure: the same scores give byte-identical results.
 */
import { CodedError } from '../errors.js';
import type { MetricGoal, MetricRange, MetricRanges } from '../core/types.js';
import { benjaminiHochberg } from '../stats/benjamini-hochberg.js';
import { coveringRange } from '../stats/intervals.js';
import { durkalskiP, mcnemarExactP, winTieLoss, type WinTieLoss } from '../stats/mcnemar.js';
import { pairedDifference, type PairedDifference } from '../stats/paired.js';
import { minimumDetectableEffect } from '../stats/power.js';
import { columnsOf, type ScoreColumns, type ScoreTable } from './episode-scores.js';
import { askedMetrics } from './metric-names.js';
import { orderMetrics } from './metric-order.js';

/** The runs compared share no episode: there is nothing to pair. */
export class NoSharedEpisodesError extends CodedError {
  constructor(baseline: string, candidate: string) {
    super(
      'BAD_USER_INPUT',
      `${baseline} and ${candidate} share no episode (episodes pair by episodeId: the env episode or dataset sample); compare runs over the same dataset, split and episode range`,
    );
  }
}

/** A run given twice to one comparison: it would be compared with itself, or counted twice in the Benjamini–Hochberg correction. */
export class RunGivenTwiceError extends CodedError {
  constructor(runId: string) {
    super(
      'BAD_USER_INPUT',
      `run ${runId} is given twice; give each run once (as the baseline or one candidate: a run given twice is compared with itself or counted twice in the Benjamini–Hochberg correction)`,
    );
  }
}

/** RunGivenTwiceError for the first run whose key comes again; `runs[i].key` tells the runs apart (an id, or a directory where ids may repeat across folders). */
export function assertDistinctRuns(runs: ReadonlyArray<{ key: string; runId: string }>): void {
  const seen = new Set<string>();
  for (const r of runs) {
    if (seen.has(r.key)) throw new RunGivenTwiceError(r.runId);
    seen.add(r.key);
  }
}

/** The level of the Benjamini–Hochberg flags. */
export const FDR_LEVEL = 0.05;

export interface FlippedEpisode {
  episodeId: string;
  baselineIndex: number;
  candidateIndex: number;
  baselineValue: number;
  candidateValue: number;
  /** gained: baseline 0, candidate 1; lost: the other way. */
  direction: 'gained' | 'lost';
}

/**
 * How the candidate did on a metric with a declared direction: `BETTER` or `WORSE` when the
 * paired 95 % interval of candidate − baseline lies wholly on one side of 0, `NO_DIFFERENCE`
 * when it holds 0; null without a direction or an interval.
 */
export type MetricVerdict = 'BETTER' | 'WORSE' | 'NO_DIFFERENCE';

/**
 * The test behind a comparison's testP: the paired t (n−1 df), the clustered paired t (C−1 df),
 * McNemar's exact test, or Durkalski's cluster-adjusted McNemar (0/1 metrics with clusters).
 */
export type TestMethod = 'paired-t' | 'clustered-t' | 'mcnemar-exact' | 'mcnemar-clustered';

export interface MetricComparison extends PairedDifference, WinTieLoss {
  metric: string;
  /** Which way is better, as both runs declare it (docs/statistics.md); null when undeclared. `wins` are pairs where the candidate is better that way (higher without a direction). */
  goal: MetricGoal | null;
  verdict: MetricVerdict | null;
  /** Shared episodes left out of this metric: an ending not counted, or the metric missing, on either side. */
  excludedPairs: number;
  /** McNemar's p for 0/1 metrics: exact, or Durkalski's cluster-adjusted test where episodes carry clusters; null otherwise. */
  mcnemarP: number | null;
  /** The p the BH flags use: McNemar's for 0/1 metrics, the paired t test's otherwise (each clustered where episodes carry clusters). */
  testP: number | null;
  /** The test behind testP. */
  testMethod: TestMethod;
  bhAdjustedP: number | null;
  bhSignificant: boolean;
  /** Minimum detectable effect at this n (α = 0.05, 80 % power) from the paired spread, times √designEffect where clustered. */
  mde: number | null;
  /** Episodes whose 0/1 value differs between the runs (0/1 metrics only), by baseline index. */
  flips: FlippedEpisode[];
}

export interface CandidateComparison {
  candidateRunId: string;
  /** Episodes present in both runs. */
  overlap: number;
  baselineEpisodes: number;
  candidateEpisodes: number;
  /** True when either run has episodes the other lacks. */
  partial: boolean;
  note: string | null;
  metrics: MetricComparison[];
}

export interface RunComparison {
  baselineRunId: string;
  metrics: string[];
  candidates: CandidateComparison[];
}

export interface ScoredRun {
  runId: string;
  scores: ScoreTable;
}

/** The range a metric of both runs keeps to: declared by both (the one covering the two), else none. */
function sharedRange(a: MetricRanges | undefined, b: MetricRanges | undefined, metric: string): MetricRange | undefined {
  const ra = a?.[metric];
  const rb = b?.[metric];
  return ra && rb ? coveringRange(ra, rb) : undefined;
}

/** The episodes two runs share: row rowsA[i] of one is row rowsB[i] of the other, in the first run's order. */
interface SharedRows {
  a: ScoreColumns;
  b: ScoreColumns;
  rowsA: Int32Array;
  rowsB: Int32Array;
}

const rowsById = new WeakMap<ScoreColumns, Map<string, number>>();

function sharedRows(a: ScoreColumns, b: ScoreColumns): SharedRows {
  const n = a.ids.length;
  // Runs over the same episodes list them in the same order: pair row by row, no lookup.
  let same = n === b.ids.length;
  for (let i = 0; same && i < n; i++) same = a.ids[i] === b.ids[i];
  if (same) {
    const rows = new Int32Array(n);
    for (let i = 0; i < n; i++) rows[i] = i;
    return { a, b, rowsA: rows, rowsB: rows };
  }
  let rowOf = rowsById.get(b);
  if (!rowOf) {
    rowOf = new Map();
    for (let j = 0; j < b.ids.length; j++) rowOf.set(b.ids[j]!, j);
    rowsById.set(b, rowOf);
  }
  const rowsA: number[] = [];
  const rowsB: number[] = [];
  for (let i = 0; i < n; i++) {
    const j = rowOf.get(a.ids[i]!);
    if (j === undefined) continue;
    rowsA.push(i);
    rowsB.push(j);
  }
  return { a, b, rowsA: Int32Array.from(rowsA), rowsB: Int32Array.from(rowsB) };
}

/** One metric's values over the shared episodes where both runs have one, in the baseline's order, with the rows they came from. */
interface MetricPairs {
  base: number[];
  cand: number[];
  clusters: (string | undefined)[];
  anyCluster: boolean;
  keptA: number[];
  keptB: number[];
}

function metricPairs(metric: string, shared: SharedRows): MetricPairs {
  const { a, b, rowsA, rowsB } = shared;
  const colA = a.values.get(metric);
  const colB = b.values.get(metric);
  const out: MetricPairs = { base: [], cand: [], clusters: [], anyCluster: false, keptA: [], keptB: [] };
  const clustered = a.clusters !== undefined || b.clusters !== undefined;
  if (!colA || !colB) return out;
  for (let i = 0; i < rowsA.length; i++) {
    const ra = rowsA[i]!;
    const rb = rowsB[i]!;
    const va = colA[ra];
    const vb = colB[rb];
    if (va === null || va === undefined || vb === null || vb === undefined) continue;
    out.base.push(va);
    out.cand.push(vb);
    if (clustered) {
      // The baseline's cluster names the pair (both runs evaluate the same episode).
      const cluster = a.clusters?.[ra] ?? b.clusters?.[rb] ?? undefined;
      if (cluster !== undefined) out.anyCluster = true;
      out.clusters.push(cluster);
    }
    out.keptA.push(ra);
    out.keptB.push(rb);
  }
  return out;
}

/** One metric of two runs paired as compareRuns pairs them: by episodeId, in the baseline's index order, pairs where either side lacks a counted value left out. */
export interface PairedMetric {
  baseline: number[];
  candidate: number[];
  /** Shared episodes left out: an ending not counted, or the metric missing, on either side. */
  excludedPairs: number;
  /** Whether any pair carries a cluster. */
  clustered: boolean;
  /** The range both runs declare for the metric (the one covering the two), if both do. */
  range: MetricRange | undefined;
}

/** `metric` of `baseline` and `candidate` paired episode by episode; NoSharedEpisodesError when they share no episode. */
export function pairMetric(baseline: ScoredRun, candidate: ScoredRun, metric: string): PairedMetric {
  const shared = sharedRows(columnsOf(baseline.scores), columnsOf(candidate.scores));
  if (shared.rowsA.length === 0) throw new NoSharedEpisodesError(`run ${baseline.runId}`, `run ${candidate.runId}`);
  const p = metricPairs(metric, shared);
  return {
    baseline: p.base,
    candidate: p.cand,
    excludedPairs: shared.rowsA.length - p.base.length,
    clustered: p.anyCluster,
    range: sharedRange(baseline.scores.metricRanges, candidate.scores.metricRanges, metric),
  };
}

/** One metric over the shared episodes. */
function compareMetric(metric: string, shared: SharedRows, range: MetricRange | undefined): MetricComparison {
  const { a, b, rowsA } = shared;
  const { base, cand, clusters, anyCluster, keptA, keptB } = metricPairs(metric, shared);
  const diff = pairedDifference(base, cand, anyCluster ? clusters : undefined, range);
  const goal = range?.goal ?? null;
  // Lower is better for a `min` metric: a win is a pair where the candidate went down.
  const wtl = goal === 'min' ? winTieLoss(cand, base) : winTieLoss(base, cand);
  const { binary } = diff;
  const flips: FlippedEpisode[] = [];
  if (binary) {
    for (let i = 0; i < base.length; i++) {
      if (base[i] === cand[i]) continue;
      flips.push({
        episodeId: a.ids[keptA[i]!]!,
        baselineIndex: a.indexes[keptA[i]!]!,
        candidateIndex: b.indexes[keptB[i]!]!,
        baselineValue: base[i]!,
        candidateValue: cand[i]!,
        direction: cand[i]! > base[i]! ? 'gained' : 'lost',
      });
    }
  }
  // The clustered model wherever the paired interval is clustered: one model for every number of the row.
  const clusteredRow = diff.clusters !== undefined && diff.clusters >= 2;
  let testMethod: TestMethod = diff.ciMethod === 'clustered-t' ? 'clustered-t' : 'paired-t';
  let mcnemarP: number | null = null;
  if (binary && clusteredRow) {
    testMethod = 'mcnemar-clustered';
    mcnemarP = durkalskiP(
      base,
      cand,
      clusters.map((c, i) => c ?? `\u0000episode:${i}`),
    );
  } else if (binary) {
    testMethod = 'mcnemar-exact';
    mcnemarP = mcnemarExactP(wtl.losses, wtl.wins);
  }
  return {
    metric,
    goal,
    verdict: verdictOf(goal, diff.ci95),
    ...diff,
    ...wtl,
    excludedPairs: rowsA.length - base.length,
    mcnemarP,
    testP: binary ? mcnemarP : diff.pValue,
    testMethod,
    bhAdjustedP: null,
    bhSignificant: false,
    mde: diff.n > 1 ? minimumDetectableEffect(diff.diffSd * Math.sqrt(diff.designEffect ?? 1), diff.n) : null,
    flips,
  };
}

function verdictOf(goal: MetricGoal | null, ci95: readonly [number, number] | null): MetricVerdict | null {
  if (goal === null || ci95 === null) return null;
  const [lo, hi] = ci95;
  const up = lo > 0;
  const down = hi < 0;
  if (!up && !down) return 'NO_DIFFERENCE';
  return up === (goal === 'max') ? 'BETTER' : 'WORSE';
}

const infinite = (v: number | null): boolean => v === Number.POSITIVE_INFINITY || v === Number.NEGATIVE_INFINITY;

/**
 * The line naming the metrics whose difference does not fit in a double (1e308 against −1e308
 * differs by 2e308): the statistics out of range are ±Infinity here, null in the API and the
 * JSON, `–` in the table, and this says why. Empty when every metric fits.
 */
function beyondDoubleNote(metrics: readonly MetricComparison[]): string[] {
  const beyond = metrics
    .filter((m) =>
      [m.meanDiff, m.diffSd, m.pairedStderr, m.unpairedStderr, m.mde, ...(m.ci95 ?? []), ...(m.unpairedCi95 ?? [])].some(infinite),
    )
    .map((m) => m.metric);
  if (beyond.length === 0) return [];
  return [
    `${beyond.join(', ')}: candidate − baseline goes beyond what a double holds (±1.8e308), so the statistics that do not fit are null`,
  ];
}

/**
 * Compares `baseline` with each candidate over `metrics` (default: every metric either side
 * reports). NoSharedEpisodesError when a candidate shares no episode with the baseline; BAD_USER_INPUT
 * for a metric no run reports.
 */
export function compareRuns(baseline: ScoredRun, candidates: readonly ScoredRun[], metrics?: readonly string[]): RunComparison {
  const reported = [baseline.scores.metrics, ...candidates.map((c) => c.scores.metrics)].flat();
  const names =
    metrics && metrics.length > 0 ? askedMetrics(metrics, reported) : orderMetrics([...new Set(reported)], baseline.scores.metricRanges);
  const baseColumns = columnsOf(baseline.scores);
  const out: CandidateComparison[] = candidates.map((c) => {
    const shared = sharedRows(baseColumns, columnsOf(c.scores));
    const overlap = shared.rowsA.length;
    if (overlap === 0) throw new NoSharedEpisodesError(`run ${baseline.runId}`, `run ${c.runId}`);
    const nb = shared.a.ids.length;
    const nc = shared.b.ids.length;
    const partial = overlap < nb || overlap < nc;
    const metrics = names.map((m) => compareMetric(m, shared, sharedRange(baseline.scores.metricRanges, c.scores.metricRanges, m)));
    const notes = [
      ...(partial ? [`compared on the ${overlap} episodes both runs have (baseline ${nb}, candidate ${nc})`] : []),
      ...beyondDoubleNote(metrics),
    ];
    return {
      candidateRunId: c.runId,
      overlap,
      baselineEpisodes: nb,
      candidateEpisodes: nc,
      partial,
      note: notes.length > 0 ? notes.join('; ') : null,
      metrics,
    };
  });
  const all = out.flatMap((c) => c.metrics);
  const bh = benjaminiHochberg(
    all.map((m) => m.testP),
    FDR_LEVEL,
  );
  all.forEach((m, i) => {
    const a = bh.adjusted[i]!;
    m.bhAdjustedP = Number.isNaN(a) ? null : a;
    m.bhSignificant = bh.significant[i]!;
  });
  return { baselineRunId: baseline.runId, metrics: names, candidates: out };
}
