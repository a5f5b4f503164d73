/**
 * AggregateFold: the run aggregates of store/aggregate.ts kept up to date one record at a time.
 * Records are folded in episode-index order (the caller folds each one once every record before
 * it is in), so `aggregates()` gives byte-for-byte what `computeAggregates` gives over the same
 * records, at O(metrics) per record instead of a pass over the whole run per episode.
 */
import type { EpisodeStatus } from '../statuses.js';
import { varianceComponents } from '../stats/variance-components.js';
import { meanOf } from '../stats/intervals.js';
import type { MetricRanges } from '../core/types.js';
import { type Aggregates, DEFAULT_TASK, summarizeValues, withImputed } from './aggregate.js';
import { isCountedEnding, missingValue, numericValue } from './counted-endings.js';
import type { EpisodeRecord, MetricAggregate } from './types.js';

/** One metric's values so far, in fold order; `groups` (by episodeId, first-seen order) on a run with repeats. */
interface MetricState {
  values: number[];
  clusters: (string | undefined)[];
  anyCluster: boolean;
  excluded: Record<string, number>;
  imputed: Record<string, number>;
  groups: Map<string, { values: number[]; cluster: string | undefined }>;
}

const cloneMetric = (m: MetricState): MetricState => ({
  values: m.values.slice(),
  clusters: m.clusters.slice(),
  anyCluster: m.anyCluster,
  excluded: { ...m.excluded },
  imputed: { ...m.imputed },
  groups: new Map([...m.groups].map(([k, g]) => [k, { values: g.values.slice(), cluster: g.cluster }])),
});

/** aggregateMetrics of store/aggregate.ts over the records folded so far. */
class MetricsFold {
  readonly #ranges: MetricRanges | undefined;
  /** Whether the records carry `repeat` (decided by the first one; a run mixing both is `mixed`). */
  #repeated: boolean | undefined;
  #mixed = false;
  /** Records folded so far by ending, in first-seen order: a metric first seen now left all of them out. */
  #statusSoFar: Record<string, number> = {};
  #anyCounted = false;
  #metrics = new Map<string, MetricState>();

  constructor(ranges: MetricRanges | undefined) {
    this.#ranges = ranges;
  }

  get mixed(): boolean {
    return this.#mixed;
  }

  #startMetric(name: string): void {
    this.#metrics.set(name, {
      values: [],
      clusters: [],
      anyCluster: false,
      excluded: { ...this.#statusSoFar },
      imputed: {},
      groups: new Map(),
    });
  }

  fold(r: EpisodeRecord): void {
    const repeated = r.repeat !== undefined;
    if (this.#repeated === undefined) this.#repeated = repeated;
    else if (this.#repeated !== repeated) this.#mixed = true;
    const counted = isCountedEnding(r.status);
    if (counted) {
      // As scoredMetricNames: a declared missing value gives its metric a line from the first counted play.
      if (!this.#anyCounted) {
        this.#anyCounted = true;
        for (const [name, d] of Object.entries(this.#ranges ?? {})) if (missingValue(d) !== undefined) this.#startMetric(name);
      }
      for (const [name, raw] of Object.entries(r.metrics)) {
        if (numericValue(raw) === undefined || this.#metrics.has(name)) continue;
        this.#startMetric(name);
      }
    }
    for (const [name, m] of this.#metrics) {
      let v = counted ? numericValue(r.metrics[name]) : undefined;
      if (v === undefined && counted) {
        v = missingValue(this.#ranges?.[name]);
        if (v !== undefined) m.imputed[r.status] = (m.imputed[r.status] ?? 0) + 1;
      }
      if (v === undefined) {
        m.excluded[r.status] = (m.excluded[r.status] ?? 0) + 1;
        continue;
      }
      if (repeated) {
        let g = m.groups.get(r.episodeId);
        if (!g) {
          g = { values: [], cluster: r.cluster };
          m.groups.set(r.episodeId, g);
        }
        g.values.push(v);
      } else {
        m.values.push(v);
        m.clusters.push(r.cluster);
        if (r.cluster !== undefined) m.anyCluster = true;
      }
    }
    this.#statusSoFar[r.status] = (this.#statusSoFar[r.status] ?? 0) + 1;
  }

  summarize(): MetricAggregate[] {
    return [...this.#metrics.keys()].sort().map((name) => {
      const m = this.#metrics.get(name)!;
      const range = this.#ranges?.[name];
      if (!this.#repeated)
        return withImputed(summarizeValues(name, m.values, m.anyCluster ? m.clusters : undefined, m.excluded, range), m.imputed, range);
      // As aggregateRepeated: each episode scores the mean of its counted plays.
      const list = [...m.groups.values()];
      const means = list.map((g) => meanOf(g.values));
      const clusters = list.map((g) => g.cluster);
      const out = summarizeValues(name, means, clusters.some((c) => c !== undefined) ? clusters : undefined, m.excluded, range);
      const vc = varianceComponents(list.map((g) => g.values));
      out.repeats = vc.repeats;
      if (vc.between !== null) out.betweenVar = vc.between;
      if (vc.within !== null) out.withinVar = vc.within;
      return withImputed(out, m.imputed, range);
    });
  }

  clone(): MetricsFold {
    const c = new MetricsFold(this.#ranges);
    c.#repeated = this.#repeated;
    c.#mixed = this.#mixed;
    c.#statusSoFar = { ...this.#statusSoFar };
    c.#anyCounted = this.#anyCounted;
    c.#metrics = new Map([...this.#metrics].map(([k, m]) => [k, cloneMetric(m)]));
    return c;
  }
}

export class AggregateFold {
  readonly #ranges: MetricRanges | undefined;
  #all: MetricsFold;
  #byTask = new Map<string, MetricsFold>();
  #anyTask = false;
  #statusCounts: Partial<Record<EpisodeStatus, number>> = {};
  #timedOut = false;
  #count = 0;

  /** `ranges`: the run's declared metric ranges (RunSummary.metricRanges), as computeAggregates takes them. */
  constructor(ranges?: MetricRanges) {
    this.#ranges = ranges;
    this.#all = new MetricsFold(ranges);
  }

  /** Records folded so far. */
  get count(): number {
    return this.#count;
  }

  /**
   * False once the records mix plays with and without `repeat`, which computeAggregates decides
   * over the whole set at once: the caller then computes the aggregates from all records.
   */
  get exact(): boolean {
    if (this.#all.mixed) return false;
    for (const t of this.#byTask.values()) if (t.mixed) return false;
    return true;
  }

  /** Folds the next record; records must come in ascending index order. */
  fold(r: EpisodeRecord): void {
    this.#all.fold(r);
    const task = r.task ?? DEFAULT_TASK;
    if (r.task !== undefined) this.#anyTask = true;
    let t = this.#byTask.get(task);
    if (!t) {
      t = new MetricsFold(this.#ranges);
      this.#byTask.set(task, t);
    }
    t.fold(r);
    this.#statusCounts[r.status] = (this.#statusCounts[r.status] ?? 0) + 1;
    if (r.status === 'TIMEOUT') this.#timedOut = true;
    this.#count += 1;
  }

  aggregates(): Aggregates {
    const byTask: Record<string, MetricAggregate[]> = {};
    if (this.#anyTask) for (const task of [...this.#byTask.keys()].sort()) byTask[task] = this.#byTask.get(task)!.summarize();
    return {
      aggregateMetrics: this.#all.summarize(),
      aggregateByTask: byTask,
      statusCounts: { ...this.#statusCounts },
      timedOut: this.#timedOut,
    };
  }

  /** An independent copy, to fold records into without changing this one. */
  clone(): AggregateFold {
    const c = new AggregateFold(this.#ranges);
    c.#all = this.#all.clone();
    c.#byTask = new Map([...this.#byTask].map(([k, t]) => [k, t.clone()]));
    c.#anyTask = this.#anyTask;
    c.#statusCounts = { ...this.#statusCounts };
    c.#timedOut = this.#timedOut;
    c.#count = this.#count;
    return c;
  }
}
