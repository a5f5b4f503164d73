/**
 * env_gridnav: Habitat-style point-goal navigation in procedurally generated grid mazes.
 * One `step` per graph iteration: without an action (iteration 0) it observes, with one it acts.
 */
import type { AssetValue, NodeCallArgs, NodeOutputs, NodesetModule } from '../../core/types.js';
import { booleanConfig, numberConfig, optionalStepConfig } from '../_lib/config.js';
import { sleep } from '../_lib/sleep.js';
import { parseAction } from './actions.js';
import { resolveEpisode } from '../_lib/episode-address.js';
import { CATALOG } from './datasets.js';
import { applyAction, createEpisode, episodeMetrics, type GridNavEpisode } from './episode.js';
import { observe } from './observation.js';
import { createPanel } from './panel.js';
import { computeFor } from './step-compute.js';

const episodes = new Map<string, GridNavEpisode>();

/** The renderer and its PNG encoder load on first use: a host boots faster without them, and most steps draw nothing. */
let renderer: Promise<typeof import('./render.js')> | undefined;

export async function trajectoryAsset(ep: GridNavEpisode): Promise<AssetValue> {
  renderer ??= import('./render.js');
  const { renderTrajectoryPng } = await renderer;
  const png = renderTrajectoryPng({
    grid: ep.maze.grid,
    start: ep.maze.start,
    goal: ep.maze.goal,
    trajectory: ep.trajectory,
    heading: ep.heading,
  });
  return { $asset: { name: 'trajectory.png', mime: 'image/png', data: png.toString('base64') } };
}

/** The episode under `ctx.episodeKey`, created from the panel defaults and the episode index when never loaded. */
function episodeFor({ ctx }: NodeCallArgs): GridNavEpisode {
  let ep = episodes.get(ctx.episodeKey);
  if (!ep) {
    ep = createEpisode(resolveEpisode(CATALOG, {}, ctx.episodeIndex));
    episodes.set(ctx.episodeKey, ep);
  } else if (ctx.step === 0 && ep.actions > 0) {
    // The same key played again from the start.
    ep = createEpisode(ep.address);
    episodes.set(ctx.episodeKey, ep);
  }
  return ep;
}

async function step(args: NodeCallArgs): Promise<NodeOutputs> {
  const { inputs, config, ctx } = args;
  const crashAt = optionalStepConfig(config, 'crash_at_step');
  const failAt = optionalStepConfig(config, 'fail_at_step');
  const latency = numberConfig(config, 'step_latency_ms', 0);
  const compute = numberConfig(config, 'step_compute_ms', 0);
  const successDistance = numberConfig(config, 'success_distance', 0);
  const renderEveryStep = booleanConfig(config, 'render_every_step', false);
  if (crashAt === ctx.step) process.exit(1);
  if (failAt === ctx.step) throw new Error(`env_gridnav step failed on purpose at step ${ctx.step} (config fail_at_step)`);
  if (compute < 0) throw new Error(`config step_compute_ms must be ≥ 0, got ${compute}`);
  // The signal is read only when there is a wait to cut short: a host makes it on first read.
  if (latency > 0) await sleep(latency, args.signal);
  const ep = episodeFor(args);
  if (inputs.action !== undefined && inputs.action !== null) applyAction(ep, parseAction(inputs.action));
  computeFor(ep, compute);
  const outputs: NodeOutputs = {
    observation: observe(ep),
    metrics: episodeMetrics(ep, successDistance),
    done: ep.stopped,
  };
  // The picture of every episode, one that runs out of steps included: the engine ends it after its last step.
  const lastStep = ctx.stepBudget !== undefined && ctx.step >= ctx.stepBudget - 1;
  if (ep.stopped || renderEveryStep || lastStep) outputs.trajectory = await trajectoryAsset(ep);
  return outputs;
}

const envGridnav: NodesetModule = {
  functions: { step },
  panel: createPanel(episodes),
  evict(episodeKey: string): void {
    episodes.delete(episodeKey);
  },
};

export default envGridnav;
