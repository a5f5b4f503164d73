/**
 * A run's episodes as what they evaluate: records grouped by episodeId (the env episode, or a
 * dataset sample), each metric's value the mean over that episode's counted records (repeats,
 * or the seeds of one sweep config). Which endings count is the policy in counted-endings.ts.
 */
import type { EpisodeRecord } from '../store/types.js';
import { isCountedEnding } from '../store/counted-endings.js';

export interface EpisodeScore {
  episodeId: string;
  /** The lowest episode index among its records (the one a link opens). */
  index: number;
  cluster?: string;
  /** metric → mean of its counted values. */
  values: Map<string, number>;
  /** True when at least one of its records ended in a counted ending. */
  counted: boolean;
}

export interface ScoreTable {
  /** By episodeId, in order of first appearance by index. */
  episodes: Map<string, EpisodeScore>;
  /** Metric names, sorted. */
  metrics: string[];
}

export function numericValue(v: unknown): number | undefined {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return undefined;
}

/** Scores of one or more runs' records (several runs of one sweep config are pooled). */
export function scoreTable(records: readonly EpisodeRecord[]): ScoreTable {
  const sorted = [...records].sort((a, b) => a.index - b.index);
  const sums = new Map<string, { score: EpisodeScore; sum: Map<string, number>; n: Map<string, number> }>();
  const metrics = new Set<string>();
  for (const r of sorted) {
    let acc = sums.get(r.episodeId);
    if (!acc) {
      acc = {
        score: {
          episodeId: r.episodeId,
          index: r.index,
          values: new Map(),
          counted: false,
          ...(r.cluster !== undefined ? { cluster: r.cluster } : {}),
        },
        sum: new Map(),
        n: new Map(),
      };
      sums.set(r.episodeId, acc);
    }
    if (!isCountedEnding(r.status)) continue;
    acc.score.counted = true;
    for (const [name, raw] of Object.entries(r.metrics)) {
      const v = numericValue(raw);
      if (v === undefined) continue;
      metrics.add(name);
      acc.sum.set(name, (acc.sum.get(name) ?? 0) + v);
      acc.n.set(name, (acc.n.get(name) ?? 0) + 1);
    }
  }
  const episodes = new Map<string, EpisodeScore>();
  for (const [id, acc] of sums) {
    for (const [name, s] of acc.sum) acc.score.values.set(name, s / acc.n.get(name)!);
    episodes.set(id, acc.score);
  }
  return { episodes, metrics: [...metrics].sort() };
}
