/** Step budget resolution: API override → the env's value for the episode → the graph's → the default. */
import { BadInputError } from '../errors.js';
import { DEFAULT_STEP_BUDGET } from '../core/types.js';

export type StepBudgetSource = 'api' | 'env' | 'graph' | 'default';

export interface ResolvedStepBudget {
  budget: number;
  source: StepBudgetSource;
}

/** Throws BAD_USER_INPUT when the value that wins is not an integer ≥ 1 (a 0-step episode would "complete" silently). */
export function resolveStepBudget(values: { api?: number; env?: number; graph?: number }): ResolvedStepBudget {
  const pick: [StepBudgetSource, number | undefined][] = [
    ['api', values.api],
    ['env', values.env],
    ['graph', values.graph],
  ];
  for (const [source, v] of pick) {
    if (v === undefined || v === null) continue;
    if (!Number.isInteger(v) || v < 1) throw new BadInputError(`step budget ${v} (from ${source}) is refused: it must be an integer ≥ 1`);
    return { budget: v, source };
  }
  return { budget: DEFAULT_STEP_BUDGET, source: 'default' };
}
