import { describe, expect, it } from 'vitest';
import env from '../../../src/nodesets/env_cartpole/handlers.js';
import { INITIAL_STATE_RANGE } from '../../../src/nodesets/env_cartpole/physics.js';
import { ctxFor, drive } from '../drive.js';

const panel = env.panel!;
const step = env.functions!.step!;

describe('env_cartpole', () => {
  it('cascades dataset → split → episode', () => {
    expect(panel.options('dataset', {})).toEqual(['classic']);
    expect(panel.options('split', { dataset: 'classic' })).toEqual(['train', 'val', 'test']);
    expect(panel.options('episode', { dataset: 'classic', split: 'test' })).toHaveLength(200);
    expect(() => panel.load({ dataset: 'classic', split: 'val', episode: -1 }, 'k')).toThrow(/episode -1 is out of range/);
  });

  it('publishes a budget of 501 iterations: iteration 0 observes, then 500 actions', async () => {
    const loaded = await panel.load({ dataset: 'classic', split: 'val', episode: 3 }, 'load');
    env.evict!('load');
    expect(loaded).toMatchObject({ episodeId: 'classic/val/3', task: 'balance', stepBudget: 501 });
  });

  it('starts each episode from a seeded state within ±0.05, the same for the same address', async () => {
    const first = async (episode: number, key: string) => {
      await panel.load({ dataset: 'classic', split: 'train', episode }, key);
      const out = await step({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: key, runSeed: episode }) });
      env.evict!(key);
      return out;
    };
    const a = await first(4, 'x');
    const b = await first(4, 'y');
    const c = await first(5, 'z');
    expect(b.observation).toEqual(a.observation);
    expect(c.observation).not.toEqual(a.observation);
    for (const v of a.observation as number[]) expect(Math.abs(v)).toBeLessThanOrEqual(INITIAL_STATE_RANGE);
    expect(a).toMatchObject({ reward: 0, done: false, metrics: { return: 0, length: 0, success: 0 } });
  });

  it('ends when the pole falls, with return = length and no success', async () => {
    const run = await drive({ env, values: { dataset: 'classic', split: 'val', episode: 0 }, episodeKey: 'fall', agent: () => 1 });
    expect(run.last.done).toBe(true);
    const m = run.last.metrics as { return: number; length: number; success: number };
    expect(m.length).toBe(run.actions.length);
    expect(m.return).toBe(m.length);
    expect(m.length).toBeGreaterThan(5);
    expect(m.length).toBeLessThan(100);
    expect(m.success).toBe(0);
    expect(run.steps.slice(1).every((s) => s.reward === 1)).toBe(true);
  });

  it('counts 500 steps as success and ends there', async () => {
    // A hand-made controller: push toward the side the pole leans to, weighted by its angular velocity.
    const balance = (o: unknown): number => {
      const [x, xDot, theta, thetaDot] = o as [number, number, number, number];
      return theta + 0.5 * thetaDot + 0.01 * x + 0.1 * xDot > 0 ? 1 : 0;
    };
    const run = await drive({ env, values: { dataset: 'classic', split: 'val', episode: 1 }, episodeKey: 'balance', agent: balance });
    expect(run.steps).toHaveLength(501);
    expect(run.last).toMatchObject({ done: true, metrics: { return: 500, length: 500, success: 1 } });
  });

  it('creates the state lazily and names a bad action', async () => {
    const out = await step({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'lazy', episodeIndex: 2 }) });
    await panel.load({ dataset: 'classic', split: 'val', episode: 2 }, 'loaded');
    const loaded = await step({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'loaded' }) });
    expect(out.observation).toEqual(loaded.observation);
    await expect((async () => step({ inputs: { action: 'up' }, config: {}, ctx: ctxFor(1, { episodeKey: 'lazy' }) }))()).rejects.toThrow(
      /unknown cart-pole action "up"/,
    );
    env.evict!('lazy');
    env.evict!('loaded');
  });
});
