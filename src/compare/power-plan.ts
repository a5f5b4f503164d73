/**
 * Power planning for a run, in Miller's form (Miller 2024, §5):
 * n = (z_{α/2} + z_β)² · (ω² + σ²_A/K_A + σ²_B/K_B) · deff / δ². Per metric, the spread is that
 * of the per-episode differences against a comparable run (paired: what a comparison will see),
 * else the run's own. An episode's score is the mean of its K repeats, so the variance of the
 * episode differences estimates ω² + σ²_A/K_A + σ²_B/K_B at the runs' own repeats; deff is the
 * design effect of clustered episodes (clustered over independent variance of the mean, never
 * below 1), 1 without clusters.
 */
import { clusteredStderr, meanAndSd, meanOf } from '../stats/intervals.js';
import { pairedDifference } from '../stats/paired.js';
import { episodesForEffect, minimumDetectableEffect } from '../stats/power.js';
import { askedMetrics } from './metric-names.js';
import type { ScoreTable } from './episode-scores.js';

export interface MetricPower {
  metric: string;
  n: number;
  /** Standard deviation of the per-episode differences (paired) or of the run's scores (own). */
  sd: number;
  /** Clustered over independent variance of the mean, at least 1; 1 without clusters. */
  designEffect: number;
  /** Clusters among the episodes, when they carry one. */
  clusters?: number;
  /** The run the differences are against (paired only): chosen for this metric, or the one asked for. */
  referenceRunId?: string;
  mde: number;
  /** The effect asked about, in the metric's unit (a relative one already multiplied out). */
  effect?: number;
  /** The effect as asked, when it was relative to the reference's (else the run's) mean: 0.05 for "5%". */
  relativeEffect?: number;
  episodesNeeded?: number;
}

export interface PowerPlan {
  runId: string;
  source: 'paired' | 'own';
  /** The reference of the first paired metric (each metric names its own). */
  referenceRunId?: string;
  metrics: MetricPower[];
}

/** An effect to size for: absolute, in the metric's unit, or relative to its mean (0.05 for "5%"). */
export interface EffectSpec {
  value: number;
  relative: boolean;
}

export interface PowerPlanOptions {
  /** Per metric name; the key '*' applies to every metric not named. */
  effects?: Readonly<Record<string, EffectSpec>> | undefined;
  metrics?: readonly string[] | undefined;
}

interface RunTable {
  runId: string;
  scores: ScoreTable;
}

/** The episodes with a value of `metric` in both runs, in the run's order, with their clusters. */
function pairsOf(run: ScoreTable, ref: ScoreTable, metric: string): { own: number[]; ref: number[]; clusters: (string | undefined)[] } {
  const own: number[] = [];
  const other: number[] = [];
  const clusters: (string | undefined)[] = [];
  for (const [id, e] of run.episodes) {
    const v = e.values.get(metric);
    const r = ref.episodes.get(id);
    const w = r?.values.get(metric);
    if (v !== undefined && w !== undefined) {
      own.push(v);
      other.push(w);
      clusters.push(e.cluster ?? r?.cluster);
    }
  }
  return { own, ref: other, clusters };
}

const anyCluster = (clusters: readonly (string | undefined)[]): boolean => clusters.some((c) => c !== undefined);

function sized(
  p: Omit<MetricPower, 'mde' | 'effect' | 'episodesNeeded' | 'relativeEffect'>,
  effect: EffectSpec | undefined,
  mean: number,
): MetricPower {
  // Miller's variance times the design effect: sd²·deff is the variance the clustered comparison will see per episode.
  const sd = p.sd * Math.sqrt(p.designEffect);
  const out: MetricPower = { ...p, mde: p.n > 1 ? minimumDetectableEffect(sd, p.n) : Number.NaN };
  if (effect) {
    const value = effect.relative ? effect.value * Math.abs(mean) : effect.value;
    if (value !== 0 && Number.isFinite(value)) {
      out.effect = value;
      if (effect.relative) out.relativeEffect = effect.value;
      if (p.n > 1) out.episodesNeeded = episodesForEffect(sd, value);
    }
  }
  return out;
}

/**
 * The reference for `metric` among `candidates` (newest first): the one sharing the most
 * episodes with a value of it whose differences are not all 0 (a re-run of the same config has
 * none, and would plan for a spread no real comparison has); the newest among equals.
 */
function referenceFor(run: ScoreTable, candidates: readonly RunTable[], metric: string): RunTable | undefined {
  let best: RunTable | undefined;
  let bestN = 0;
  for (const c of candidates) {
    const p = pairsOf(run, c.scores, metric);
    if (p.own.length <= bestN || !p.own.some((v, i) => v !== p.ref[i])) continue;
    best = c;
    bestN = p.own.length;
  }
  return best;
}

/**
 * `references`: comparable runs, newest first. With `pinned` (a reference the user named) every
 * metric is paired against it; else each metric against the reference chosen for it
 * (referenceFor), and its own spread where none fits.
 */
export function powerPlan(run: RunTable, references: readonly RunTable[], opts: PowerPlanOptions & { pinned?: boolean } = {}): PowerPlan {
  const names =
    opts.metrics && opts.metrics.length > 0
      ? askedMetrics(opts.metrics, [...run.scores.metrics, ...references.flatMap((r) => r.scores.metrics)]).sort()
      : run.scores.metrics;
  const effectOf = (m: string): EffectSpec | undefined => opts.effects?.[m] ?? opts.effects?.['*'];
  const metrics = names.map((m) => {
    const ref = opts.pinned ? references[0] : referenceFor(run.scores, references, m);
    if (ref) {
      const p = pairsOf(run.scores, ref.scores, m);
      // The sd and design effect a comparison of the two would report (the same bits).
      const d = pairedDifference(p.ref, p.own, anyCluster(p.clusters) ? p.clusters : undefined);
      return sized(
        {
          metric: m,
          n: p.own.length,
          sd: d.diffSd,
          designEffect: d.designEffect ?? 1,
          ...(d.clusters !== undefined ? { clusters: d.clusters } : {}),
          referenceRunId: ref.runId,
        },
        effectOf(m),
        meanOf(p.ref),
      );
    }
    const values: number[] = [];
    const clusters: (string | undefined)[] = [];
    for (const e of run.scores.episodes.values()) {
      const v = e.values.get(m);
      if (v !== undefined) {
        values.push(v);
        clusters.push(e.cluster);
      }
    }
    const { sd } = meanAndSd(values);
    const own = ownDesignEffect(values, clusters, sd);
    return sized(
      { metric: m, n: values.length, sd, designEffect: own.deff, ...(own.clusters !== undefined ? { clusters: own.clusters } : {}) },
      effectOf(m),
      meanOf(values),
    );
  });
  const first = metrics.find((m) => m.referenceRunId !== undefined);
  return first
    ? { runId: run.runId, source: 'paired', referenceRunId: first.referenceRunId!, metrics }
    : { runId: run.runId, source: 'own', metrics };
}

/** The design effect of one run's own scores: (clustered SE / (sd/√n))², at least 1. */
function ownDesignEffect(
  values: readonly number[],
  clusters: readonly (string | undefined)[],
  sd: number,
): { deff: number; clusters?: number } {
  if (!anyCluster(clusters) || values.length < 2) return { deff: 1 };
  const cl = clusteredStderr(
    values,
    clusters.map((c, i) => c ?? `\u0000episode:${i}`),
  );
  if (cl.clusters < 2) return { deff: 1, clusters: cl.clusters };
  const ratio = (cl.se / (sd / Math.sqrt(values.length))) ** 2;
  return { deff: Number.isFinite(ratio) ? Math.max(1, ratio) : 1, clusters: cl.clusters };
}

/**
 * A run that can serve as a power plan's reference: it shares episodes with `run` and scores
 * at least one of them differently. A re-run of the same config (same seeds, same scores) has
 * paired differences of 0 and would plan for a spread no real comparison has.
 */
export function isPowerReference(run: ScoreTable, other: ScoreTable): boolean {
  for (const [id, e] of run.episodes) {
    const o = other.episodes.get(id);
    if (!o) continue;
    for (const [m, v] of e.values) if (o.values.has(m) && o.values.get(m) !== v) return true;
  }
  return false;
}

/**
 * Parses `--effect` values: `0.05` (every metric), `success=0.05`, `steps=-2`, `success=5%`
 * (relative to the mean). Throws a message naming the bad value; a later value for the same
 * metric wins.
 */
export function parseEffects(values: readonly string[]): Record<string, EffectSpec> {
  const out: Record<string, EffectSpec> = {};
  for (const raw of values) {
    const eq = raw.indexOf('=');
    const metric = eq >= 0 ? raw.slice(0, eq).trim() : '*';
    const text = (eq >= 0 ? raw.slice(eq + 1) : raw).trim();
    const relative = text.endsWith('%');
    const number = Number(relative ? text.slice(0, -1) : text);
    if (metric === '' || text === '' || (relative && text.length === 1) || !Number.isFinite(number) || number === 0)
      throw new RangeError(
        `--effect "${raw}": give a non-zero number for every metric (0.05), or per metric (success=0.05, steps=-2, success=5%)`,
      );
    out[metric] = { value: relative ? number / 100 : number, relative };
  }
  return out;
}
