/**
 * What a gate asks of one metric, written as a bound on candidate − baseline:
 * `success > 0` (superiority), `success >= -0.02` (non-inferiority within 0.02),
 * `steps < 0` or `steps <= 2` for a metric where lower is better, `|success| <= 0.02`
 * (equivalence within ±0.02). `>` and `>=` ask the same (the intervals are continuous).
 */
import { BadInputError } from '../errors.js';
import type { MetricGoal } from '../core/types.js';
import type { ThresholdDecision } from '../stats/sequential-test.js';

export type GateQuestion = 'superiority' | 'non-inferiority' | 'equivalence';

export interface GateRequirement {
  metric: string;
  question: GateQuestion;
  /** How far past 0 the bound lies, in the metric's unit (≥ 0): the non-inferiority or equivalence margin, or the least superiority asked for. */
  margin: number;
  /** `up`: candidate − baseline must lie above `threshold`; `down`: below; null for equivalence (within ±margin). */
  direction: 'up' | 'down' | null;
  /** The bound on candidate − baseline (±margin). */
  threshold: number;
  /** As written (or made from the metric's goal). */
  text: string;
}

const PATTERN = /^\s*(\|?)\s*([^\s<>|=]+)\s*(\|?)\s*(>=|<=|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*$/i;

/** One requirement from its text; BAD_USER_INPUT naming the text and the forms it may take. */
export function parseRequirement(text: string): GateRequirement {
  const m = PATTERN.exec(text);
  const bad = (why: string) =>
    new BadInputError(
      `requirement "${text}": ${why}; write a bound on candidate − baseline: "success > 0", "success >= -0.02", "steps <= 2" or "|success| <= 0.02"`,
    );
  if (!m) throw bad('not understood');
  const [, open, metric, close, op, num] = m as unknown as [string, string, string, string, string, string];
  const value = Number(num);
  if (!Number.isFinite(value)) throw bad(`${num} is not a finite number`);
  if (open !== close) throw bad('unbalanced |…|');
  if (open === '|') {
    if (op === '>' || op === '>=') throw bad('an equivalence bound is |metric| <= margin');
    if (!(value > 0)) throw bad('the equivalence margin must be > 0');
    return { metric, question: 'equivalence', margin: value, direction: null, threshold: value, text: text.trim() };
  }
  const direction = op.startsWith('>') ? 'up' : 'down';
  // A bound on the worse side of 0 tolerates a loss (non-inferiority); one on the better side, or 0, asks for a gain.
  const tolerant = direction === 'up' ? value < 0 : value > 0;
  return {
    metric,
    question: tolerant ? 'non-inferiority' : 'superiority',
    margin: Math.abs(value),
    direction,
    threshold: value,
    text: text.trim(),
  };
}

/** The requirement a metric with a goal gets when none is given: better than the baseline (`metric > 0`, or `< 0` where lower is better). */
export function defaultRequirement(metric: string, goal: MetricGoal): GateRequirement {
  return parseRequirement(`${metric} ${goal === 'max' ? '>' : '<'} 0`);
}

/** BAD_USER_INPUT when a one-sided requirement asks for the metric to move against its declared goal (`success < 0` where higher is better). */
export function checkAgainstGoal(r: GateRequirement, goal: MetricGoal | null): void {
  if (r.direction === null || goal === null) return;
  if ((r.direction === 'up') !== (goal === 'max'))
    throw new BadInputError(
      `requirement "${r.text}" asks ${r.metric} to go ${r.direction === 'up' ? 'up' : 'down'}, but ${goal === 'max' ? 'higher' : 'lower'} is better for it (its declared goal is ${goal}); write "${r.metric} ${goal === 'max' ? '>=' : '<='} …"`,
    );
}

export type GateVerdict = 'pass' | 'fail' | 'inconclusive';

/**
 * The verdict the tests of a requirement's thresholds (in thresholdsOf's order) have reached,
 * and after how many pairs. Equivalence passes once shown above −margin and below +margin,
 * fails once shown past either.
 */
export function requirementVerdict(
  decisions: readonly ThresholdDecision[],
  r: GateRequirement,
): { verdict: GateVerdict; at: number | null } {
  const [first, second] = decisions;
  if (r.direction !== null) {
    const d = first!.decided;
    if (d === null) return { verdict: 'inconclusive', at: null };
    return { verdict: (d.side === 'above') === (r.direction === 'up') ? 'pass' : 'fail', at: d.at };
  }
  const low = first!.decided;
  const high = second!.decided;
  const past = [low?.side === 'below' ? low.at : Infinity, high?.side === 'above' ? high.at : Infinity];
  if (Math.min(...past) < Infinity) return { verdict: 'fail', at: Math.min(...past) };
  if (low?.side === 'above' && high?.side === 'below') return { verdict: 'pass', at: Math.max(low.at, high.at) };
  return { verdict: 'inconclusive', at: null };
}

/** The thresholds a requirement's tests watch: its bound, or −margin and +margin for equivalence. */
export const thresholdsOf = (r: GateRequirement): number[] => (r.direction === null ? [-r.margin, r.margin] : [r.threshold]);
