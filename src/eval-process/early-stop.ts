/**
 * EarlyStop: a stopWhen run's watch over its records. Records arrive in any order (workers,
 * lanes); the watch reads them only as a completed prefix of the run's hand-out order (a seeded
 * permutation of the plan), so the stopping episode is a function of the records alone: the
 * same at 1 or 16 workers. When the prefix decides, `onStop` fires once; the run then stops
 * dispatch and cancels what is in flight. Every record outside the stopping prefix (in flight
 * then, or finished past it) is recorded CANCELLED, so the run's statistics are the prefix's.
 */
import type { MetricRanges } from '../core/types.js';
import type { ScoreTable } from '../compare/episode-scores.js';
import { StopMonitor, type StopDecision, type StopRule } from '../compare/stop-decision.js';
import { zOf } from '../stats/distributions.js';
import { meanAndSd } from '../stats/intervals.js';
import { DEFAULT_ALPHA, episodesForEffect } from '../stats/power.js';
import type { EpisodeRecord, StopWhenState } from '../store/types.js';

/** At most this many points of the interval's path are kept in the summary (thinned evenly as the prefix grows). */
const MAX_PATH_POINTS = 200;

export interface EarlyStopOptions {
  /** The hand-out order: run indices, the first played first. */
  order: readonly number[];
  rule: StopRule;
  baseline: { runId: string; scores: ScoreTable } | null;
  metricRanges?: MetricRanges | undefined;
  /** Called once, when the prefix decides (or the budget ends) before the last episode. */
  onStop(decision: StopDecision): void;
}

export class EarlyStop {
  readonly #o: EarlyStopOptions;
  readonly #monitor: StopMonitor;
  /** Run index → its position in the order. */
  readonly #position = new Map<number, number>();
  /** Finished records not yet read, by position. */
  readonly #waiting = new Map<number, EpisodeRecord>();
  #next = 0;
  #path: Array<[number, number, number]> = [];
  #stride = 1;

  constructor(o: EarlyStopOptions) {
    this.#o = o;
    for (const [at, index] of o.order.entries()) this.#position.set(index, at);
    this.#monitor = new StopMonitor(o.baseline?.scores ?? null, o.rule, {
      maxEpisodes: o.order.length,
      metricRanges: o.metricRanges,
    });
  }

  /** A finished record (any order). A CANCELLED one never extends the prefix: the run is being stopped. */
  add(record: EpisodeRecord): void {
    const at = this.#position.get(record.index);
    if (at === undefined || at < this.#next || this.#monitor.stopped || record.status === 'CANCELLED') return;
    this.#waiting.set(at, record);
    for (let r = this.#waiting.get(this.#next); r; r = this.#waiting.get(this.#next)) {
      this.#waiting.delete(this.#next++);
      const d = this.#monitor.push(r);
      this.#trace();
      if (d) {
        this.#waiting.clear();
        if (d.atEpisode! < this.#o.order.length) this.#o.onStop(d);
        return;
      }
    }
  }

  /** Records of the prefix read so far. */
  get read(): number {
    return this.#monitor.read;
  }

  /** Whether the run stopped before its last episode. */
  get stoppedEarly(): boolean {
    const d = this.#monitor.stopped;
    return d !== null && d.atEpisode! < this.#o.order.length;
  }

  /** Run indices outside the stopping prefix (empty while it goes on). */
  outsidePrefix(): Set<number> {
    const d = this.#monitor.stopped;
    if (!d) return new Set();
    return new Set(this.#o.order.slice(d.atEpisode!));
  }

  #trace(): void {
    const ci = this.#monitor.current().interval;
    if (!ci) return;
    const n = this.#monitor.read;
    if (n % this.#stride !== 0 && !this.#monitor.stopped) return;
    this.#path.push([n, ci[0], ci[1]]);
    if (this.#path.length > MAX_PATH_POINTS) {
      this.#stride *= 2;
      this.#path = this.#path.filter(([k], i, all) => k % this.#stride === 0 || i === all.length - 1);
    }
  }

  /** The summary's stopWhen: the rule, the prefix read, the interval and its path, and once stopped, why and what it saved. */
  state(): StopWhenState {
    const { rule, baseline, order } = this.#o;
    const d = this.#monitor.current();
    const values = this.#monitor.values;
    const stopped = this.#monitor.stopped;
    return {
      rule: rule.kind === 'decided' ? 'decided' : `halfwidth<=${rule.halfwidth}`,
      metric: rule.kind === 'decided' ? rule.requirement.metric : rule.metric,
      requirement: rule.kind === 'decided' ? rule.requirement.text : null,
      against: baseline?.runId ?? null,
      read: this.#monitor.read,
      interval: d.interval,
      verdict: d.verdict,
      path: this.#path.map(([n, lo, hi]) => [n, lo, hi]),
      stopped: stopped
        ? {
            reason: stopped.reason!,
            atEpisode: stopped.atEpisode!,
            planned: order.length,
            saved: order.length - stopped.atEpisode!,
            fixedNPlan: fixedNPlan(rule, values),
          }
        : null,
    };
  }
}

/**
 * The episodes a fixed-n plan would have needed for the same answer, from the values read: to
 * tell their mean from the requirement's bound (α two-sided, 80 % power), or to bring a fixed-n
 * interval to the half-width. Null where the values cannot say (under two, or on the bound).
 */
function fixedNPlan(rule: StopRule, values: readonly number[]): number | null {
  if (values.length < 2) return null;
  const { mean, sd } = meanAndSd(values);
  if (!Number.isFinite(sd)) return null;
  if (rule.kind === 'halfwidth') return Math.max(2, Math.ceil(((zOf(1 - DEFAULT_ALPHA / 2) * sd) / rule.halfwidth) ** 2));
  const r = rule.requirement;
  const distance = r.direction === null ? Math.abs(r.margin - Math.abs(mean)) : Math.abs(mean - r.threshold);
  return distance > 0 ? episodesForEffect(sd, distance) : null;
}
