/**
 * Whether a run may stop early: over its completed records in plan order (a prefix of the
 * seeded order the episodes are played in, never arrival order), the first point at which the
 * anytime-valid comparison against a baseline decides the requirement, or the interval's
 * half-width falls to a target, or the budget is spent. A function of the records only: the
 * same records give the same stopping episode at any worker count. Each record is one play;
 * pairs are by episodeId with the baseline's score of that episode (its mean over repeats).
 */
import type { MetricRange } from '../core/types.js';
import { BadInputError } from '../errors.js';
import { BettingSequence } from '../stats/betting-test.js';
import { AsymptoticSequence } from '../stats/normal-mixture.js';
import { DEFAULT_ALPHA } from '../stats/power.js';
import { SequentialTest } from '../stats/sequential-test.js';
import { playValue, type ScoredPlay } from '../store/counted-endings.js';
import type { ScoreTable } from './episode-scores.js';
import { requirementVerdict, thresholdsOf, type GateRequirement, type GateVerdict } from './gate-requirement.js';

/** When to stop: once `requirement` is decided against the baseline, or once the interval's half-width is at most `halfwidth`. */
export type StopRule = { kind: 'decided'; requirement: GateRequirement } | { kind: 'halfwidth'; metric: string; halfwidth: number };

export interface StopOptions {
  /** The comparison's error level. @default 0.05 */
  alpha?: number;
  /** Stop after this many records in plan order whatever the interval says. */
  maxEpisodes?: number;
  /** The run's declared metric ranges: a metric with a finite min and max gets the betting sequence (valid at every n), any other the asymptotic one. */
  metricRanges?: Readonly<Record<string, MetricRange>> | undefined;
}

export interface StopDecision {
  stop: boolean;
  reason: 'decided' | 'halfwidth' | 'budget' | null;
  /** Records read (in plan order) when it stopped; null when it goes on. */
  atEpisode: number | null;
  /** For a `decided` rule: the verdict reached (inconclusive while it goes on or when the budget ran out first). */
  verdict: GateVerdict | null;
  /** The anytime-valid interval when it stopped (or after the last record): of candidate − baseline with a baseline, of the run's own mean without. */
  interval: [number, number] | null;
}

type EpisodeRecordLike = ScoredPlay & { episodeId: string };

function boundsOf(range: MetricRange | undefined, paired: boolean): [number, number] | null {
  if (range?.min === undefined || range.max === undefined || !(range.max > range.min)) return null;
  return paired ? [range.min - range.max, range.max - range.min] : [range.min, range.max];
}

/** An interval sequence fed one value at a time: the betting one on bounded values, else the asymptotic one. */
function intervalSequence(bounds: [number, number] | null, alpha: number): { push(v: number): void; interval(): [number, number] | null } {
  if (bounds) {
    const [lo, hi] = bounds;
    const w = hi - lo;
    const s = new BettingSequence(alpha);
    return {
      push: (v) => s.push(Math.min(1, Math.max(0, (v - lo) / w))),
      interval: () => {
        if (s.n === 0) return null;
        const [a, b] = s.interval();
        return [lo + a * w, lo + b * w];
      },
    };
  }
  const s = new AsymptoticSequence(alpha);
  return { push: (v) => s.push(v), interval: () => (Number.isFinite(s.lower) ? [s.lower, s.upper] : null) };
}

/**
 * The stop decision fed one record at a time (plan order), for a run that is still playing:
 * push() each record of the completed prefix as the prefix grows; the first decision that
 * stops is kept. stopDecision over the same records reaches the same decision.
 */
export class StopMonitor {
  readonly #baseline: ScoreTable | null;
  readonly #rule: StopRule;
  readonly #metric: string;
  readonly #range: MetricRange | undefined;
  readonly #limit: number;
  readonly #sequence: ReturnType<typeof intervalSequence>;
  readonly #test: SequentialTest | null;
  readonly #diffs: number[] = [];
  #at = 0;
  #stopped: StopDecision | null = null;

  /** BAD_USER_INPUT for a `decided` rule without a baseline or a non-positive half-width. */
  constructor(baseline: ScoreTable | null, rule: StopRule, opts: StopOptions = {}) {
    const alpha = opts.alpha ?? DEFAULT_ALPHA;
    this.#metric = rule.kind === 'decided' ? rule.requirement.metric : rule.metric;
    if (rule.kind === 'decided' && !baseline) throw new BadInputError('a run stops when decided only against a baseline (--against)');
    if (rule.kind === 'halfwidth' && !(rule.halfwidth > 0))
      throw new BadInputError(`the half-width to stop at must be > 0, got ${rule.halfwidth}`);
    this.#baseline = baseline;
    this.#rule = rule;
    this.#range = opts.metricRanges?.[this.#metric];
    const bounds = boundsOf(this.#range, baseline !== null);
    this.#sequence = intervalSequence(bounds, alpha);
    this.#test = rule.kind === 'decided' ? new SequentialTest(thresholdsOf(rule.requirement), { alpha, bounds }) : null;
    this.#limit = opts.maxEpisodes ?? Number.POSITIVE_INFINITY;
  }

  /** The decision once it stopped, else null. */
  get stopped(): StopDecision | null {
    return this.#stopped;
  }

  /** Records read so far. */
  get read(): number {
    return this.#at;
  }

  /** The paired differences (or own values, without a baseline) read so far, in plan order. */
  get values(): readonly number[] {
    return this.#diffs;
  }

  /** The decision now: the one that stopped, or where it stands (stop false). */
  current(): StopDecision {
    if (this.#stopped) return this.#stopped;
    return { stop: false, reason: null, atEpisode: null, verdict: this.#test ? 'inconclusive' : null, interval: this.#sequence.interval() };
  }

  /** Reads the next record of the prefix; the decision when this one stops the run, else null (also after it stopped). */
  push(rec: EpisodeRecordLike): StopDecision | null {
    if (this.#stopped) return null;
    const at = ++this.#at;
    const rule = this.#rule;
    const own = playValue(rec, this.#metric, this.#range);
    const base = this.#baseline ? this.#baseline.episodes.get(rec.episodeId)?.values.get(this.#metric) : 0;
    if (own !== undefined && base !== undefined) {
      const v = own - base;
      this.#diffs.push(v);
      this.#sequence.push(v);
      this.#test?.push(v);
    }
    const test = this.#test;
    let d: StopDecision | null = null;
    if (test && rule.kind === 'decided') {
      const { verdict } = requirementVerdict(test.thresholds(), rule.requirement);
      if (verdict !== 'inconclusive') d = { stop: true, reason: 'decided', atEpisode: at, verdict, interval: this.#sequence.interval() };
    } else if (rule.kind === 'halfwidth') {
      const ci = this.#sequence.interval();
      if (ci && (ci[1] - ci[0]) / 2 <= rule.halfwidth) d = { stop: true, reason: 'halfwidth', atEpisode: at, verdict: null, interval: ci };
    }
    if (!d && at >= this.#limit)
      d = { stop: true, reason: 'budget', atEpisode: at, verdict: test ? 'inconclusive' : null, interval: this.#sequence.interval() };
    this.#stopped = d;
    return d;
  }
}

/**
 * The stop decision over `records` (the completed prefix, plan order). `baseline`: the run
 * compared against (needed by a `decided` rule); without it a `halfwidth` rule reads the run's
 * own mean. BAD_USER_INPUT for a `decided` rule without a baseline or a non-positive half-width.
 */
export function stopDecision(
  records: readonly EpisodeRecordLike[],
  baseline: ScoreTable | null,
  rule: StopRule,
  opts: StopOptions = {},
): StopDecision {
  const monitor = new StopMonitor(baseline, rule, opts);
  for (const rec of records) {
    const d = monitor.push(rec);
    if (d) return d;
  }
  return monitor.current();
}

/** What `--stop-when` says, before the metric and requirement are known: `decided`, or `halfwidth<=x`. */
export type StopWhen = { kind: 'decided' } | { kind: 'halfwidth'; halfwidth: number };

/** Parses `--stop-when decided|halfwidth<=x`; BAD_USER_INPUT naming the text otherwise. */
export function parseStopWhen(text: string): StopWhen {
  const t = text.trim();
  if (t === 'decided') return { kind: 'decided' };
  const m = /^halfwidth\s*<=\s*([0-9]*\.?[0-9]+(?:e[-+]?\d+)?)$/i.exec(t);
  const x = m ? Number(m[1]) : Number.NaN;
  if (!(x > 0 && Number.isFinite(x)))
    throw new BadInputError(
      `--stop-when "${text}": write "decided" (against --against BASELINE) or "halfwidth<=X" with X > 0, e.g. halfwidth<=0.02`,
    );
  return { kind: 'halfwidth', halfwidth: x };
}
