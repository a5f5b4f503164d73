/** One cart-pole episode: the physical state and how long the pole has stayed up. */
import type { EpisodeAddress } from '../_lib/episode-address.js';
import { episodeInitialState } from './datasets.js';
import { isFallen, MAX_STEPS, stepPhysics, type CartPoleAction, type CartPoleState } from './physics.js';

export interface CartPoleEpisode {
  address: EpisodeAddress;
  state: CartPoleState;
  steps: number;
  fallen: boolean;
}

export interface CartPoleMetrics {
  /** Sum of rewards: 1 per step taken, the falling step included (as in Gym). */
  return: number;
  length: number;
  /** 1 when the pole stayed up for MAX_STEPS steps. */
  success: number;
}

/** Graph iterations an episode needs at most: iteration 0 only observes, then one per action. */
export const CARTPOLE_STEP_BUDGET = MAX_STEPS + 1;

export function createEpisode(address: EpisodeAddress): CartPoleEpisode {
  return { address, state: episodeInitialState(address), steps: 0, fallen: false };
}

export function isDone(ep: CartPoleEpisode): boolean {
  return ep.fallen || ep.steps >= MAX_STEPS;
}

/** Applies one action; returns its reward. */
export function applyAction(ep: CartPoleEpisode, action: CartPoleAction): number {
  if (isDone(ep)) {
    throw new Error(
      `cart-pole episode ${ep.address.dataset}/${ep.address.split}/${ep.address.index} already ended after ${ep.steps} steps`,
    );
  }
  ep.state = stepPhysics(ep.state, action);
  ep.steps++;
  ep.fallen = isFallen(ep.state);
  return 1;
}

export function episodeMetrics(ep: CartPoleEpisode): CartPoleMetrics {
  return { return: ep.steps, length: ep.steps, success: !ep.fallen && ep.steps >= MAX_STEPS ? 1 : 0 };
}
