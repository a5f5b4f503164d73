/**
 * Power planning for a run: per metric the minimum detectable effect at its n and the
 * episodes needed for a given effect, from the spread of the per-episode differences against a
 * comparable run (paired: what a comparison will see), else from the run's own spread.
 */
import { meanAndSd } from '../stats/intervals.js';
import { pairedDifference } from '../stats/paired.js';
import { episodesForEffect, minimumDetectableEffect } from '../stats/power.js';
import { askedMetrics } from './metric-names.js';
import type { ScoreTable } from './episode-scores.js';

export interface MetricPower {
  metric: string;
  n: number;
  sd: number;
  mde: number;
  effect?: number;
  episodesNeeded?: number;
}

export interface PowerPlan {
  runId: string;
  source: 'paired' | 'own';
  referenceRunId?: string;
  metrics: MetricPower[];
}

function metricPower(metric: string, n: number, sd: number, effect: number | undefined): MetricPower {
  return {
    metric,
    n,
    sd,
    mde: n > 1 ? minimumDetectableEffect(sd, n) : Number.NaN,
    ...(effect !== undefined && effect !== 0 ? { effect, episodesNeeded: n > 1 ? episodesForEffect(sd, effect) : undefined } : {}),
  };
}

/** `reference`: a comparable run's scores, when one shares episodes with the run. */
export function powerPlan(
  run: { runId: string; scores: ScoreTable },
  reference: { runId: string; scores: ScoreTable } | undefined,
  opts: { effect?: number | undefined; metrics?: readonly string[] | undefined } = {},
): PowerPlan {
  const names =
    opts.metrics && opts.metrics.length > 0
      ? askedMetrics(opts.metrics, [...run.scores.metrics, ...(reference?.scores.metrics ?? [])]).sort()
      : run.scores.metrics;
  if (reference) {
    const metrics = names.map((m) => {
      const own: number[] = [];
      const ref: number[] = [];
      for (const [id, e] of run.scores.episodes) {
        const v = e.values.get(m);
        const w = reference.scores.episodes.get(id)?.values.get(m);
        if (v !== undefined && w !== undefined) {
          own.push(v);
          ref.push(w);
        }
      }
      // The sd a comparison of the two would report (the same bits; scaled where a difference overflows).
      return metricPower(m, own.length, pairedDifference(ref, own).diffSd, opts.effect);
    });
    return { runId: run.runId, source: 'paired', referenceRunId: reference.runId, metrics };
  }
  const metrics = names.map((m) => {
    const values: number[] = [];
    for (const e of run.scores.episodes.values()) {
      const v = e.values.get(m);
      if (v !== undefined) values.push(v);
    }
    return metricPower(m, values.length, meanAndSd(values).sd, opts.effect);
  });
  return { runId: run.runId, source: 'own', metrics };
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
