/** Runs one env + agent episode in-process the way the eval runner does: load, then env step → agent per iteration. */
import { deriveSeed } from '../../src/core/prng.js';
import type { CallContext, NodeOutputs, NodesetModule, PanelLoadResult, PanelValues } from '../../src/core/types.js';

export interface DriveOptions {
  env: NodesetModule;
  /** Produces the action for an observation; absent to send no action. */
  agent: (observation: unknown, ctx: CallContext) => Promise<unknown> | unknown;
  values: PanelValues;
  episodeKey: string;
  runSeed?: number;
  episodeIndex?: number;
  envConfig?: Record<string, unknown>;
  /** Iterations; defaults to the budget the env publishes. */
  budget?: number;
}

export interface DriveResult {
  loaded: PanelLoadResult;
  /** Env outputs, one per iteration. */
  steps: NodeOutputs[];
  actions: unknown[];
  last: NodeOutputs;
}

export async function drive(o: DriveOptions): Promise<DriveResult> {
  const loaded = await o.env.panel!.load(o.values, o.episodeKey);
  const runSeed = o.runSeed ?? 0;
  const episodeIndex = o.episodeIndex ?? Number(o.values.episode ?? 0);
  const budget = o.budget ?? loaded.stepBudget ?? 500;
  const steps: NodeOutputs[] = [];
  const actions: unknown[] = [];
  let action: unknown;
  try {
    for (let step = 0; step < budget; step++) {
      const ctx: CallContext = {
        runSeed,
        episodeIndex,
        seed: deriveSeed(runSeed, episodeIndex),
        step,
        stepBudget: budget,
        episodeKey: o.episodeKey,
        nodeId: 'env',
      };
      const out = await o.env.functions!.step!({ inputs: action === undefined ? {} : { action }, config: o.envConfig ?? {}, ctx });
      steps.push(out);
      if (out.done === true) break;
      action = await o.agent(out.observation, { ...ctx, nodeId: 'agent' });
      actions.push(action);
    }
  } finally {
    o.env.evict?.(o.episodeKey);
  }
  return { loaded, steps, actions, last: steps[steps.length - 1]! };
}

export function ctxFor(step: number, over: Partial<CallContext> = {}): CallContext {
  const runSeed = over.runSeed ?? 0;
  const episodeIndex = over.episodeIndex ?? 0;
  return { runSeed, episodeIndex, seed: deriveSeed(runSeed, episodeIndex), step, episodeKey: 'test:0', nodeId: 'env', ...over };
}
