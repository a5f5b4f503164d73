/** Checks a run spec before anything starts, naming the bad field and value. */
import { BadInputError } from '../errors.js';
import type { RunSpec } from '../store/types.js';

/** Upper bound on workers: each one owns a host process per replicated nodeset. */
export const MAX_WORKERS = 64;

function integer(name: string, v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new BadInputError(`${name} must be an integer in ${min}..${max === Number.MAX_SAFE_INTEGER ? '∞' : max}, got ${JSON.stringify(v)}`);
  }
}

export function checkRunSpec(spec: RunSpec): void {
  if (typeof spec.graphName !== 'string' || spec.graphName === '') throw new BadInputError(`graphName must be a non-empty string, got ${JSON.stringify(spec.graphName)}`);
  integer('episodeCount', spec.episodeCount, 1);
  integer('workerCount', spec.workerCount, 1, MAX_WORKERS);
  if (typeof spec.seed !== 'number' || !Number.isSafeInteger(spec.seed)) throw new BadInputError(`seed must be a safe integer, got ${JSON.stringify(spec.seed)}`);
  integer('episodeOffset', spec.episodeOffset ?? 0, 0);
  if (spec.stepBudget !== undefined && spec.stepBudget !== null) integer('stepBudget', spec.stepBudget, 1);
  const per = spec.perStepTimeoutSec;
  if (per !== undefined && per !== null && !(typeof per === 'number' && Number.isFinite(per) && per > 0)) {
    throw new BadInputError(`perStepTimeoutSec must be a positive number of seconds, got ${JSON.stringify(per)}`);
  }
  const perCall = spec.perCallTimeoutSec;
  if (perCall !== undefined && perCall !== null && !(typeof perCall === 'number' && Number.isFinite(perCall) && perCall > 0)) {
    throw new BadInputError(`perCallTimeoutSec must be a positive number of seconds, got ${JSON.stringify(perCall)}`);
  }
  if (spec.overrides !== undefined && (typeof spec.overrides !== 'object' || spec.overrides === null || Array.isArray(spec.overrides))) {
    throw new BadInputError(`overrides must be an object of node id → config patch, got ${JSON.stringify(spec.overrides)}`);
  }
}
