/**
 * Checks a SubmitInput up front (every error names the field and the value it got), and turns
 * it into the run's spec with every default filled in.
 */
import { BadInputError } from '../errors.js';
import type { RunSpec } from '../store/types.js';
import type { SubmitInput } from './types.js';

export const MAX_EPISODES = 100_000;
export const MAX_WORKERS = 64;

const show = (v: unknown): string => (v === undefined ? 'undefined' : JSON.stringify(v) ?? String(v));

function int(field: string, v: unknown, min: number, max: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `in ${min}..${max}`;
    throw new BadInputError(`${field} must be an integer ${range}, got ${show(v)}`);
  }
}

function positive(field: string, v: unknown, allowZero = false): void {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (!allowZero && v === 0)) {
    throw new BadInputError(`${field} must be a ${allowZero ? 'non-negative' : 'positive'} number, got ${show(v)}`);
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

export function checkSubmitInput(input: SubmitInput): void {
  if (!isPlainObject(input)) throw new BadInputError(`the run input must be an object, got ${show(input)}`);
  if (typeof input.graphName !== 'string' || input.graphName.trim() === '') {
    throw new BadInputError(`graphName must be a non-empty string, got ${show(input.graphName)}`);
  }
  int('episodeCount', input.episodeCount, 1, MAX_EPISODES);
  if (input.workerCount !== undefined) int('workerCount', input.workerCount, 1, MAX_WORKERS);
  if (input.seed !== undefined) int('seed', input.seed, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  if (input.stepBudget !== undefined) int('stepBudget', input.stepBudget, 1, Number.MAX_SAFE_INTEGER);
  if (input.perStepTimeoutSec !== undefined) positive('perStepTimeoutSec', input.perStepTimeoutSec);
  if (input.perCallTimeoutSec !== undefined) positive('perCallTimeoutSec', input.perCallTimeoutSec);
  if (input.priority !== undefined) int('priority', input.priority, -1_000_000, 1_000_000);
  if (input.exclusiveGpu !== undefined && typeof input.exclusiveGpu !== 'boolean') {
    throw new BadInputError(`exclusiveGpu must be true or false, got ${show(input.exclusiveGpu)}`);
  }
  if (input.marginalVramMb !== undefined) positive('marginalVramMb', input.marginalVramMb, true);
  if (input.memoryBudgetMb !== undefined) positive('memoryBudgetMb', input.memoryBudgetMb);
  if (input.viaSubprocess !== undefined && typeof input.viaSubprocess !== 'boolean') {
    throw new BadInputError(`viaSubprocess must be true or false, got ${show(input.viaSubprocess)}`);
  }
  if (input.overrides !== undefined) {
    if (!isPlainObject(input.overrides)) {
      throw new BadInputError(`overrides must be an object of node id → config patch, got ${show(input.overrides)}`);
    }
    for (const [node, patch] of Object.entries(input.overrides)) {
      if (!isPlainObject(patch)) throw new BadInputError(`overrides.${node} must be an object of config keys, got ${show(patch)}`);
    }
  }
  for (const field of ['dataset', 'split'] as const) {
    const v = input[field];
    if (v !== undefined && (typeof v !== 'string' || v === '')) throw new BadInputError(`${field} must be a non-empty string, got ${show(v)}`);
  }
  if (input.episodeOffset !== undefined) int('episodeOffset', input.episodeOffset, 0, Number.MAX_SAFE_INTEGER);
}

/** The spec of a checked input. EVAL_SUBPROCESS=0 in the backend's environment runs every run in-process. */
export function runSpecFromInput(input: SubmitInput, runId: string, workspaceDir: string | undefined): RunSpec {
  return {
    runId,
    graphName: input.graphName,
    episodeCount: input.episodeCount,
    workerCount: input.workerCount ?? 1,
    seed: input.seed ?? 0,
    ...(input.stepBudget !== undefined ? { stepBudget: input.stepBudget } : {}),
    ...(input.perStepTimeoutSec !== undefined ? { perStepTimeoutSec: input.perStepTimeoutSec } : {}),
    ...(input.perCallTimeoutSec !== undefined ? { perCallTimeoutSec: input.perCallTimeoutSec } : {}),
    priority: input.priority ?? 0,
    exclusiveGpu: input.exclusiveGpu ?? false,
    ...(input.marginalVramMb !== undefined ? { marginalVramMb: input.marginalVramMb } : {}),
    ...(input.memoryBudgetMb !== undefined ? { memoryBudgetMb: input.memoryBudgetMb } : {}),
    overrides: input.overrides ?? {},
    ...(input.dataset !== undefined ? { dataset: input.dataset } : {}),
    ...(input.split !== undefined ? { split: input.split } : {}),
    episodeOffset: input.episodeOffset ?? 0,
    ...(workspaceDir ? { activeWorkspaceDir: workspaceDir } : {}),
    viaSubprocess: input.viaSubprocess !== false && process.env.EVAL_SUBPROCESS !== '0',
    createdAt: new Date().toISOString(),
  };
}
