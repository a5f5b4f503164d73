/**
 * The two gridnav agents, one observation at a time. Their noise comes from
 * createPrng(seed, step, node), so it depends only on the run seed, the episode index, the
 * step and the node — never on the batch a call shares or the worker that sent it.
 */
import type { Action } from '../env_gridnav/actions.js';
import { createPrng, type Prng } from '../../core/prng.js';
import type { CallContext } from '../../core/types.js';
import { numberConfig } from '../_lib/config.js';
import { nodeStreamId } from './node-stream.js';
import { readObservation } from './observation.js';
import { shortestPathAction } from './shortest-path.js';

/** What noise and the random agent choose from: every action but stop. */
export const MOVES: readonly Action[] = ['forward', 'turn_left', 'turn_right'];

export const DEFAULT_EPSILON = 0.1;
/** The random agent stops once this many actions (the stop included) are left in the env's budget. */
export const DEFAULT_STOP_WHEN_LEFT = 1;

function callPrng(ctx: CallContext): Prng {
  return createPrng(ctx.seed, ctx.step, nodeStreamId(ctx.nodeId));
}

export function plannerAct(observation: unknown, config: Record<string, unknown>, ctx: CallContext): Action {
  const epsilon = numberConfig(config, 'epsilon', DEFAULT_EPSILON);
  if (epsilon < 0 || epsilon > 1) throw new Error(`config epsilon must be in [0, 1], got ${epsilon}`);
  const view = readObservation(observation);
  const prng = callPrng(ctx);
  if (prng.next() < epsilon) return prng.pick(MOVES);
  return shortestPathAction(view);
}

export function randomAct(observation: unknown, config: Record<string, unknown>, ctx: CallContext): Action {
  const stopWhenLeft = numberConfig(config, 'stop_when_left', DEFAULT_STOP_WHEN_LEFT);
  const view = readObservation(observation);
  // Actions the budget still allows: iteration 0 only observes, so a budget of B applies B − 1 actions.
  const left = view.stepBudget - 1 - view.steps;
  if (left <= stopWhenLeft) return 'stop';
  return callPrng(ctx).pick(MOVES);
}
