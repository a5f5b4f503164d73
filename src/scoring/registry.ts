/**
 * The scorers by name, and `scoreAnswer`, which checks everything about a scoring request
 * (scorer, config, target) and builds the ScoreEntry a record keeps.
 */
import { BadInputError, CodedError } from '../errors.js';
import type { ScoreEntry, ScoreTarget } from '../core/score-entry.js';
import { choiceScorer } from './choice.js';
import { exactScorer } from './exact.js';
import { f1Scorer } from './f1.js';
import { includesScorer } from './includes.js';
import { numericScorer } from './numeric.js';
import { patternScorer } from './pattern.js';
import { resolveScorerConfig, type Scorer } from './scorer.js';

const SCORERS: ReadonlyMap<string, Scorer> = new Map(
  [exactScorer, includesScorer, patternScorer, numericScorer, choiceScorer, f1Scorer].map((s) => [s.name, s]),
);

/** A scorer name nobody registered. */
export class UnknownScorerError extends CodedError {
  constructor(name: string) {
    super('UNKNOWN_SCORER', `unknown scorer "${name}" (known: ${scorerNames().join(', ')})`);
  }
}

/** Registered scorer names, sorted. */
export const scorerNames = (): string[] => [...SCORERS.keys()].sort();

export const listScorers = (): Scorer[] => scorerNames().map((n) => SCORERS.get(n)!);

/** The scorer called `name`; UNKNOWN_SCORER listing the known ones otherwise. */
export function getScorer(name: string): Scorer {
  const s = SCORERS.get(name);
  if (!s) throw new UnknownScorerError(name);
  return s;
}

/** A scorer with its config checked and defaults filled: what a rescoring checks before it writes anything. */
export interface PreparedScorer {
  scorer: Scorer;
  config: Record<string, unknown>;
  /** The config as given (recorded on the entries when not empty). */
  given: Record<string, unknown>;
}

export function prepareScorer(name: string, config?: Record<string, unknown>): PreparedScorer {
  const scorer = getScorer(name);
  if (config !== undefined && (typeof config !== 'object' || config === null || Array.isArray(config))) {
    throw new BadInputError(`scorer "${name}": config must be a JSON object`);
  }
  return { scorer, config: resolveScorerConfig(scorer, config), given: { ...(config ?? {}) } };
}

/** Answer text from a node input: a string, a number, or a chat message's `content`; null when absent. */
export function answerText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'object' && v !== null && typeof (v as { content?: unknown }).content === 'string') {
    return (v as { content: string }).content;
  }
  return null;
}

/** A sample target as scorers take it; BAD_USER_INPUT for anything else. */
export function asTarget(v: unknown): ScoreTarget | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')) return v.map(String);
  throw new BadInputError(`a target must be a string, a number or a list of strings, got ${JSON.stringify(v)}`);
}

export interface ScoreRequest {
  answer: string | null;
  target: ScoreTarget | null;
  choices?: readonly string[];
}

/**
 * Scores one answer. No answer scores 0 ("no answer"); a scorer that needs a target refuses
 * a sample without one (BAD_USER_INPUT).
 */
export function scoreAnswer(p: PreparedScorer, req: ScoreRequest): ScoreEntry {
  const { scorer } = p;
  if (req.target === null && scorer.needsTarget) throw new BadInputError(`scorer "${scorer.name}" needs a target and the sample has none`);
  const result =
    req.answer === null
      ? { value: 0, extracted: null, explanation: 'no answer' }
      : scorer.score({ answer: req.answer, target: req.target, ...(req.choices ? { choices: req.choices } : {}) }, p.config);
  const entry: ScoreEntry = {
    scorer: scorer.name,
    value: Math.min(1, Math.max(0, result.value)),
    answer: req.answer,
    extracted: result.extracted,
    target: req.target,
    ...(req.choices ? { choices: [...req.choices] } : {}),
    explanation: result.explanation,
  };
  if (Object.keys(p.given).length > 0) entry.config = p.given;
  return entry;
}
