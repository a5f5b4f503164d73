/**
 * Paired comparison of runs: a baseline against candidates, episodes aligned by what they
 * evaluate (episodeId), per metric the paired difference with its interval beside the unpaired
 * one, McNemar and win/tie/loss for 0/1 metrics, the flipped episodes, and Benjamini–Hochberg
 * flags over every metric × candidate. Pure: the same scores give byte-identical results.
 */
import { CodedError } from '../errors.js';
import { benjaminiHochberg } from '../stats/benjamini-hochberg.js';
import { mcnemarExactP, winTieLoss, type WinTieLoss } from '../stats/mcnemar.js';
import { pairedDifference, type PairedDifference } from '../stats/paired.js';
import { minimumDetectableEffect } from '../stats/power.js';
import { isBinary } from '../stats/intervals.js';
import type { EpisodeScore, ScoreTable } from './episode-scores.js';

/** The runs compared share no episode: there is nothing to pair. */
export class NoSharedEpisodesError extends CodedError {
  constructor(baseline: string, candidate: string) {
    super(
      'BAD_USER_INPUT',
      `${baseline} and ${candidate} share no episode (episodes pair by episodeId: the env episode or dataset sample); compare runs over the same dataset, split and episode range`,
    );
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

export interface MetricComparison extends PairedDifference, WinTieLoss {
  metric: string;
  /** Shared episodes left out of this metric: an ending not counted, or the metric missing, on either side. */
  excludedPairs: number;
  binary: boolean;
  /** McNemar exact p for 0/1 metrics; null otherwise. */
  mcnemarP: number | null;
  /** The p the BH flags use: McNemar's for 0/1 metrics, the paired t test's otherwise. */
  testP: number | null;
  bhAdjustedP: number | null;
  bhSignificant: boolean;
  /** Minimum detectable effect at this n (α = 0.05, 80 % power) from the paired spread. */
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

function sharedEpisodes(a: ScoreTable, b: ScoreTable): Array<[EpisodeScore, EpisodeScore]> {
  const pairs: Array<[EpisodeScore, EpisodeScore]> = [];
  for (const [id, ea] of a.episodes) {
    const eb = b.episodes.get(id);
    if (eb) pairs.push([ea, eb]);
  }
  return pairs;
}

/** One metric over the shared episodes. */
export function compareMetric(metric: string, pairs: ReadonlyArray<[EpisodeScore, EpisodeScore]>): MetricComparison {
  const base: number[] = [];
  const cand: number[] = [];
  const clusters: (string | undefined)[] = [];
  const kept: Array<[EpisodeScore, EpisodeScore]> = [];
  for (const pair of pairs) {
    const [ea, eb] = pair;
    const va = ea.values.get(metric);
    const vb = eb.values.get(metric);
    if (va === undefined || vb === undefined) continue;
    base.push(va);
    cand.push(vb);
    // The baseline's cluster names the pair (both runs evaluate the same episode).
    clusters.push(ea.cluster ?? eb.cluster);
    kept.push(pair);
  }
  const diff = pairedDifference(base, cand, clusters.some((c) => c !== undefined) ? clusters : undefined);
  const wtl = winTieLoss(base, cand);
  const binary = isBinary(base) && isBinary(cand);
  const flips: FlippedEpisode[] = [];
  if (binary) {
    for (let i = 0; i < kept.length; i++) {
      if (base[i] === cand[i]) continue;
      const [ea, eb] = kept[i]!;
      flips.push({
        episodeId: ea.episodeId,
        baselineIndex: ea.index,
        candidateIndex: eb.index,
        baselineValue: base[i]!,
        candidateValue: cand[i]!,
        direction: cand[i]! > base[i]! ? 'gained' : 'lost',
      });
    }
  }
  const mcnemarP = binary ? mcnemarExactP(wtl.losses, wtl.wins) : null;
  return {
    metric,
    ...diff,
    ...wtl,
    excludedPairs: pairs.length - kept.length,
    binary,
    mcnemarP,
    testP: binary ? mcnemarP : diff.pValue,
    bhAdjustedP: null,
    bhSignificant: false,
    mde: diff.n > 1 ? minimumDetectableEffect(diff.diffSd, diff.n) : null,
    flips,
  };
}

/**
 * Compares `baseline` with each candidate over `metrics` (default: every metric either side
 * reports). NoSharedEpisodesError when a candidate shares no episode with the baseline.
 */
export function compareRuns(baseline: ScoredRun, candidates: readonly ScoredRun[], metrics?: readonly string[]): RunComparison {
  const names =
    metrics && metrics.length > 0
      ? [...new Set(metrics)]
      : [...new Set([baseline.scores.metrics, ...candidates.map((c) => c.scores.metrics)].flat())].sort();
  const out: CandidateComparison[] = candidates.map((c) => {
    const pairs = sharedEpisodes(baseline.scores, c.scores);
    if (pairs.length === 0) throw new NoSharedEpisodesError(`run ${baseline.runId}`, `run ${c.runId}`);
    const nb = baseline.scores.episodes.size;
    const nc = c.scores.episodes.size;
    const partial = pairs.length < nb || pairs.length < nc;
    return {
      candidateRunId: c.runId,
      overlap: pairs.length,
      baselineEpisodes: nb,
      candidateEpisodes: nc,
      partial,
      note: partial ? `compared on the ${pairs.length} episodes both runs have (baseline ${nb}, candidate ${nc})` : null,
      metrics: names.map((m) => compareMetric(m, pairs)),
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
