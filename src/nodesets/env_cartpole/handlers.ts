/**
 * env_cartpole: the classic cart-pole (Gym CartPole-v1 physics). One `step` per graph
 * iteration: without an action (iteration 0) it observes, with one it acts.
 */
import type { NodeCallArgs, NodeOutputs, NodesetModule } from '../../core/types.js';
import { numberConfig } from '../_lib/config.js';
import { resolveEpisode } from '../_lib/episode-address.js';
import { sleep } from '../_lib/sleep.js';
import { CATALOG } from './datasets.js';
import { applyAction, createEpisode, episodeMetrics, isDone, type CartPoleEpisode } from './episode.js';
import { createPanel } from './panel.js';
import { parseCartPoleAction } from './physics.js';

const episodes = new Map<string, CartPoleEpisode>();

/** The episode under `ctx.episodeKey`, created from the panel defaults and the episode index when never loaded. */
function episodeFor({ ctx }: NodeCallArgs): CartPoleEpisode {
  let ep = episodes.get(ctx.episodeKey);
  if (!ep || (ctx.step === 0 && ep.steps > 0)) {
    ep = createEpisode(ep?.address ?? resolveEpisode(CATALOG, {}, ctx.episodeIndex));
    episodes.set(ctx.episodeKey, ep);
  }
  return ep;
}

async function step(args: NodeCallArgs): Promise<NodeOutputs> {
  const { inputs, config } = args;
  // The signal is read only when there is a wait to cut short: a host makes it on first read.
  const latency = numberConfig(config, 'step_latency_ms', 0);
  if (latency > 0) await sleep(latency, args.signal);
  const ep = episodeFor(args);
  const action = inputs.action;
  const reward = action === undefined || action === null ? 0 : applyAction(ep, parseCartPoleAction(action));
  return {
    observation: [...ep.state],
    reward,
    done: isDone(ep),
    metrics: episodeMetrics(ep),
  };
}

const envCartpole: NodesetModule = {
  functions: { step },
  panel: createPanel(episodes),
  evict(episodeKey: string): void {
    episodes.delete(episodeKey);
  },
};

export default envCartpole;
