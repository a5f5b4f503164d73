/** The interface every scorer implements: a pure function of (answer, target, choices, config). */
import { BadInputError } from '../errors.js';
import type { ScoreTarget } from '../core/score-entry.js';
import { showValue } from '../core/show-value.js';

export interface ScoreInput {
  /** The agent's answer as text. */
  answer: string;
  /** The sample's target; null when it has none (only `pattern` can score without one). */
  target: ScoreTarget | null;
  /** The sample's choices, for multiple choice. */
  choices?: readonly string[];
}

export interface ScoreResult {
  /** 0..1; 1 is correct. */
  value: number;
  /** What was taken from the answer; null when nothing usable was found. */
  extracted: string | null;
  explanation: string;
}

/** One config key a scorer understands. */
export interface ScorerConfigKey {
  type: 'string' | 'number' | 'boolean';
  default?: string | number | boolean;
  description: string;
}

export interface Scorer {
  name: string;
  description: string;
  config: Record<string, ScorerConfigKey>;
  /** False when the scorer can decide without a target (a pattern that must merely match). */
  needsTarget: boolean;
  /** Further checks of a resolved config (throws BAD_USER_INPUT), run before anything is scored. */
  check?(config: Record<string, unknown>): void;
  /** `config` has been checked against `this.config` and filled with defaults. */
  score(input: ScoreInput, config: Record<string, unknown>): ScoreResult;
}

/**
 * Checks `config` against a scorer's keys and fills in the defaults: an unknown key or a value
 * of the wrong type is BAD_USER_INPUT naming the scorer and the key.
 */
export function resolveScorerConfig(scorer: Scorer, config: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const given = config ?? {};
  for (const key of Object.keys(given)) {
    if (!Object.hasOwn(scorer.config, key)) {
      const known = Object.keys(scorer.config);
      throw new BadInputError(`scorer "${scorer.name}": unknown config key "${key}" (known: ${known.length ? known.join(', ') : 'none'})`);
    }
  }
  for (const [key, spec] of Object.entries(scorer.config)) {
    const v = given[key];
    if (v === undefined || v === null) {
      if (spec.default !== undefined) out[key] = spec.default;
      continue;
    }
    if (typeof v !== spec.type) {
      throw new BadInputError(`scorer "${scorer.name}": config "${key}" must be a ${spec.type}, got ${showValue(v)}`);
    }
    // JSON reads 1e400 as Infinity, and a tolerance of Infinity would accept any answer.
    if (spec.type === 'number' && !Number.isFinite(v)) {
      throw new BadInputError(`scorer "${scorer.name}": config "${key}" must be a finite number, got ${showValue(v)}`);
    }
    out[key] = v;
  }
  scorer.check?.(out);
  return out;
}

/** The target as a list of acceptable strings (a number becomes its decimal text). */
export function targetList(target: ScoreTarget | null): string[] {
  if (target === null) return [];
  if (Array.isArray(target)) return target;
  return [String(target)];
}
