/**
 * Where the mean of a paired difference stands against some thresholds, watched after every
 * value: for each threshold, whether the mean has been shown above or below it (and at which
 * value), with an error rate that holds however often it is looked at. Bounded differences use
 * the betting tests (betting-test.ts, valid at every n); unbounded ones the asymptotic
 * normal-mixture sequence (normal-mixture.ts, valid as n grows). Pure and fed in index order:
 * the same values give the same decisions at the same value count.
 */
import { BettingTest, bettingInterval, type BetSide } from './betting-test.js';
import { AsymptoticSequence } from './normal-mixture.js';

export type SequenceMethod = 'betting' | 'asymptotic';

export interface ThresholdDecision {
  threshold: number;
  /** Shown above or below the threshold, and after how many values; null while undecided. */
  decided: { side: BetSide; at: number } | null;
}

export interface SequentialTestOptions {
  alpha: number;
  /** The range the differences keep to (±1 for 0/1 metrics, ± the width of a declared range); null when unbounded. */
  bounds: readonly [number, number] | null;
}

/** Tests of the mean against every threshold at once, fed one difference at a time. */
export class SequentialTest {
  readonly method: SequenceMethod;
  private readonly lo: number;
  private readonly width: number;
  private readonly bets: BettingTest[] = [];
  private readonly asymptotic: AsymptoticSequence | null = null;
  private readonly decisions: ThresholdDecision[];
  private count = 0;

  constructor(thresholds: readonly number[], opts: SequentialTestOptions) {
    this.decisions = thresholds.map((threshold) => ({ threshold, decided: null }));
    if (opts.bounds) {
      const [lo, hi] = opts.bounds;
      if (!(Number.isFinite(lo) && Number.isFinite(hi) && hi > lo))
        throw new RangeError(`bounds must be finite with lo < hi, got [${lo}, ${hi}]`);
      this.method = 'betting';
      this.lo = lo;
      this.width = hi - lo;
      for (const t of thresholds) {
        if (!(t > lo && t < hi)) throw new RangeError(`threshold ${t} lies outside the differences' range (${lo}, ${hi})`);
        this.bets.push(new BettingTest((t - lo) / this.width, opts.alpha));
      }
    } else {
      this.method = 'asymptotic';
      this.lo = 0;
      this.width = 1;
      this.asymptotic = new AsymptoticSequence(opts.alpha);
    }
  }

  push(d: number): void {
    this.count++;
    if (this.asymptotic) {
      this.asymptotic.push(d);
      for (const dec of this.decisions) {
        if (dec.decided !== null) continue;
        if (this.asymptotic.lower > dec.threshold) dec.decided = { side: 'above', at: this.count };
        else if (this.asymptotic.upper < dec.threshold) dec.decided = { side: 'below', at: this.count };
      }
      return;
    }
    // Clamped: float noise a hair outside the bounds must not break the bets' log(1 + λ(x − m)).
    const x = Math.min(1, Math.max(0, (d - this.lo) / this.width));
    for (let i = 0; i < this.bets.length; i++) {
      const bet = this.bets[i]!;
      if (bet.decided !== null) continue;
      bet.push(x);
      this.decisions[i]!.decided = bet.decided;
    }
  }

  get n(): number {
    return this.count;
  }

  /** Per threshold (as given), its decision so far. */
  thresholds(): readonly ThresholdDecision[] {
    return this.decisions;
  }

  /** The asymptotic sequence's interval so far (the betting one is read with confidenceInterval). */
  get asymptoticInterval(): [number, number] | null {
    return this.asymptotic && Number.isFinite(this.asymptotic.lower) ? [this.asymptotic.lower, this.asymptotic.upper] : null;
  }
}

/**
 * The anytime-valid interval of the mean of `diffs` (index order) after the last, by the method
 * the bounds call for; null where the asymptotic sequence has too few values.
 */
export function sequenceInterval(diffs: readonly number[], opts: SequentialTestOptions): [number, number] | null {
  if (opts.bounds) {
    const [lo, hi] = opts.bounds;
    const w = hi - lo;
    const [a, b] = bettingInterval(
      diffs.map((d) => Math.min(1, Math.max(0, (d - lo) / w))),
      opts.alpha,
    );
    return [lo + a * w, lo + b * w];
  }
  const s = new AsymptoticSequence(opts.alpha);
  for (const d of diffs) s.push(d);
  return Number.isFinite(s.lower) ? [s.lower, s.upper] : null;
}
