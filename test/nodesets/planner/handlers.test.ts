import { describe, expect, it } from 'vitest';
import env from '../../../src/nodesets/env_gridnav/handlers.js';
import planner from '../../../src/nodesets/planner/handlers.js';
import type { GridNavObservation } from '../../../src/nodesets/env_gridnav/observation.js';
import type { CallContext, NodeCallArgs } from '../../../src/core/types.js';
import { ctxFor, drive } from '../drive.js';

// Async wrappers turn a synchronous throw into a rejection.
const act = async (rows: NodeCallArgs[]) => planner.batched!.act!(rows);
const random = async (rows: NodeCallArgs[]) => planner.batched!.random!(rows);

async function observationOf(values: Record<string, string | number>, key: string): Promise<GridNavObservation> {
  const run = await drive({ env, values, episodeKey: key, agent: () => 'stop', budget: 1 });
  return run.steps[0]!.observation as GridNavObservation;
}

function agent(fn: 'act' | 'random', config: Record<string, unknown>) {
  return async (observation: unknown, ctx: CallContext): Promise<unknown> => {
    const [out] = await planner.batched![fn]!([{ inputs: { observation }, config, ctx }]);
    return out!.action;
  };
}

describe('planner act', () => {
  it('with epsilon 0 reaches the goal and stops on it in each of 20 episodes, within the env budget', async () => {
    for (const [dataset, count] of [
      ['mini', 8],
      ['standard', 8],
      ['large', 4],
    ] as const) {
      for (let episode = 0; episode < count; episode++) {
        const run = await drive({
          env,
          values: { dataset, split: 'test', episode },
          episodeKey: `expert:${dataset}:${episode}`,
          agent: agent('act', { epsilon: 0 }),
        });
        expect(run.last.done, `${dataset}/test/${episode}`).toBe(true);
        expect(run.last.metrics, `${dataset}/test/${episode}`).toMatchObject({ success: 1, spl: 1, distance_to_goal: 0 });
        expect(run.steps.length).toBeLessThanOrEqual(run.loaded.stepBudget!);
      }
    }
  });

  it('with the default epsilon takes some random actions and still mostly succeeds', async () => {
    let successes = 0;
    let differing = 0;
    for (let episode = 0; episode < 10; episode++) {
      const values = { dataset: 'standard', split: 'val', episode };
      const noisy = await drive({ env, values, episodeKey: `noisy:${episode}`, runSeed: 3, agent: agent('act', {}) });
      const expert = await drive({ env, values, episodeKey: `expert:${episode}`, runSeed: 3, agent: agent('act', { epsilon: 0 }) });
      successes += (noisy.last.metrics as { success: number }).success;
      if (JSON.stringify(noisy.actions) !== JSON.stringify(expert.actions)) differing++;
    }
    expect(successes).toBeGreaterThanOrEqual(9);
    expect(differing).toBeGreaterThanOrEqual(5);
  });

  it('draws its noise from (run seed, episode index, step) only: the same inputs give the same actions', async () => {
    const values = { dataset: 'standard', split: 'val', episode: 6 };
    const once = (runSeed: number) =>
      drive({ env, values, episodeKey: `det:${runSeed}`, runSeed, agent: agent('act', { epsilon: 0.5 }) }).then((r) => r.actions);
    const a = await once(7);
    const b = await once(7);
    const c = await once(8);
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
  });

  it('turns toward the next cell and stops on the goal', async () => {
    const obs = await observationOf({ dataset: 'mini', split: 'val', episode: 0 }, 'turns');
    const [onGoal] = await act([{ inputs: { observation: { ...obs, position: obs.goal } }, config: { epsilon: 0 }, ctx: ctxFor(0) }]);
    expect(onGoal!.action).toBe('stop');
    // Each of the four headings at the start gives forward for one of them and turns for the rest.
    const actions = await act(
      [0, 1, 2, 3].map((heading) => ({ inputs: { observation: { ...obs, heading } }, config: { epsilon: 0 }, ctx: ctxFor(0) })),
    );
    expect(actions.filter((o) => o.action === 'forward').length).toBeGreaterThanOrEqual(1);
    expect(actions.every((o) => ['forward', 'turn_left', 'turn_right'].includes(o.action as string))).toBe(true);
  });

  it('is batch-invariant: a row alone and inside a batch of 7 give the same output', async () => {
    const rows: NodeCallArgs[] = [];
    for (let i = 0; i < 7; i++) {
      const observation = await observationOf({ dataset: 'standard', split: 'val', episode: i }, `batch:${i}`);
      rows.push({ inputs: { observation }, config: { epsilon: 0.3 }, ctx: ctxFor(i + 2, { episodeIndex: i, runSeed: 5 }) });
    }
    const batch = await act(rows);
    for (let i = 0; i < 7; i++) {
      const [alone] = await act([rows[i]!]);
      expect(JSON.stringify(alone)).toBe(JSON.stringify(batch[i]));
      expect(JSON.stringify(await planner.functions!.act!(rows[i]!))).toBe(JSON.stringify(batch[i]));
    }
  });

  it('names a bad observation', async () => {
    await expect(act([{ inputs: { observation: 3 }, config: {}, ctx: ctxFor(0) }])).rejects.toThrow(/observation must be/);
    const obs = await observationOf({ dataset: 'mini', split: 'val', episode: 0 }, 'bad');
    await expect(act([{ inputs: { observation: { ...obs, heading: 9 } }, config: {}, ctx: ctxFor(0) }])).rejects.toThrow(
      /heading must be 0, 1, 2 or 3, got 9/,
    );
    await expect(act([{ inputs: { observation: obs }, config: { epsilon: 2 }, ctx: ctxFor(0) }])).rejects.toThrow(
      /epsilon must be in \[0, 1\], got 2/,
    );
  });
});

describe('planner random', () => {
  it('moves at random, never stops early, and stops on the last action the budget allows', async () => {
    const run = await drive({
      env,
      values: { dataset: 'mini', split: 'val', episode: 3 },
      episodeKey: 'random',
      agent: agent('random', {}),
    });
    const budget = run.loaded.stepBudget!;
    expect(run.steps).toHaveLength(budget);
    expect(run.last.done).toBe(true);
    expect(run.actions.slice(0, -1).every((a) => a !== 'stop')).toBe(true);
    expect(new Set(run.actions.slice(0, -1))).toEqual(new Set(['forward', 'turn_left', 'turn_right']));
    expect((run.last.metrics as { steps: number }).steps).toBe(budget - 1);
  });

  it('depends on the run seed and nothing else', async () => {
    const values = { dataset: 'mini', split: 'val', episode: 3 };
    const once = (runSeed: number) =>
      drive({ env, values, episodeKey: `random:${runSeed}`, runSeed, agent: agent('random', {}) }).then((r) => r.actions);
    expect(await once(1)).toEqual(await once(1));
    expect(await once(2)).not.toEqual(await once(1));
  });

  it('is batch-invariant', async () => {
    const obs = await observationOf({ dataset: 'mini', split: 'val', episode: 0 }, 'rb');
    const rows = Array.from({ length: 7 }, (_, i) => ({ inputs: { observation: obs }, config: {}, ctx: ctxFor(i, { episodeIndex: i }) }));
    const batch = await random(rows);
    for (let i = 0; i < 7; i++) expect(await random([rows[i]!])).toEqual([batch[i]]);
  });
});
