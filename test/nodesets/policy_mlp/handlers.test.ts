import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import cartpole from '../../../src/nodesets/env_cartpole/handlers.js';
import policy from '../../../src/nodesets/policy_mlp/handlers.js';
import { checkWeights, forward, packWeights } from '../../../src/nodesets/policy_mlp/mlp.js';
import type { NodeCallArgs, NodesetManifest } from '../../../src/core/types.js';
import { ctxFor, drive } from '../drive.js';

const dir = fileURLToPath(new URL('../../../src/nodesets/policy_mlp/', import.meta.url));
const act = async (rows: NodeCallArgs[]) => policy.batched!.act!(rows);
const tmpDirs: string[] = [];

beforeAll(async () => {
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as NodesetManifest;
  await policy.init!({ dir, manifest });
});

afterEach(async () => {
  for (const d of tmpDirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('policy_mlp', () => {
  it('ships valid 4-16-16-2 weights', async () => {
    const weights = checkWeights(JSON.parse(await readFile(join(dir, 'weights.json'), 'utf8')));
    expect(weights.layers).toEqual([4, 16, 16, 2]);
  });

  it('keeps the pole up for 500 steps on most of 20 held-out episodes (val and test)', async () => {
    for (const split of ['val', 'test']) {
      let successes = 0;
      for (let episode = 0; episode < 10; episode++) {
        const run = await drive({
          env: cartpole,
          values: { dataset: 'classic', split, episode },
          episodeKey: `mlp:${split}:${episode}`,
          agent: async (observation, ctx) => (await act([{ inputs: { observation }, config: {}, ctx }]))[0]!.action,
        });
        successes += (run.last.metrics as { success: number }).success;
      }
      expect(successes, split).toBeGreaterThanOrEqual(8);
    }
  });

  it('is batch-invariant: a row alone and inside a batch of 7 give identical bytes', async () => {
    const observations = [
      [0.01, -0.02, 0.03, -0.04],
      [-1.2, 0.5, 0.11, -0.7],
      [2.0, -1.5, -0.19, 1.3],
      [0.3333333333333333, 0.1, 1e-9, -1e-12],
      [0, 0, 0, 0],
      [-0.049, 0.049, -0.049, 0.049],
      [1.7, 2.2, 0.2, -2.9],
    ];
    const rows = observations.map((observation, i) => ({ inputs: { observation }, config: {}, ctx: ctxFor(i, { episodeIndex: i }) }));
    const batch = await act(rows);
    expect(batch).toHaveLength(7);
    for (let i = 0; i < 7; i++) {
      const alone = await act([rows[i]!]);
      expect(JSON.stringify(alone[0])).toBe(JSON.stringify(batch[i]));
      expect(JSON.stringify(await policy.functions!.act!(rows[i]!))).toBe(JSON.stringify(batch[i]));
    }
    // Reversed order, too: a row's bytes do not depend on its position in the batch.
    const reversed = await act([...rows].reverse());
    expect(JSON.stringify([...reversed].reverse())).toBe(JSON.stringify(batch));
    const floats = new Float64Array(batch.flatMap((o) => o.logits as number[]));
    const again = new Float64Array((await act(rows)).flatMap((o) => o.logits as number[]));
    expect(Buffer.from(again.buffer).equals(Buffer.from(floats.buffer))).toBe(true);
  });

  it('acts by the argmax of its outputs', async () => {
    const [out] = await act([{ inputs: { observation: [0, 0, 0.1, 0.5] }, config: {}, ctx: ctxFor(0) }]);
    const logits = out!.logits as number[];
    expect(out!.action).toBe(logits[1]! > logits[0]! ? 1 : 0);
    // Leaning right and falling right: push right.
    expect(out!.action).toBe(1);
  });

  it('names a bad observation', async () => {
    await expect(act([{ inputs: { observation: 'up' }, config: {}, ctx: ctxFor(0) }])).rejects.toThrow(/observation as an array/);
    await expect(act([{ inputs: { observation: [1, 2, 3] }, config: {}, ctx: ctxFor(0) }])).rejects.toThrow(
      /has 3 values, the network takes 4/,
    );
    await expect(act([{ inputs: { observation: [1, 2, 3, null] }, config: {}, ctx: ctxFor(0) }])).rejects.toThrow(/input 3 is null/);
  });

  it('refuses a weights file that does not fit the network, naming the file and the field', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'policy-mlp-'));
    tmpDirs.push(tmp);
    const weights = JSON.parse(await readFile(join(dir, 'weights.json'), 'utf8'));
    weights.biases[1] = [1, 2];
    await writeFile(join(tmp, 'weights.json'), JSON.stringify(weights));
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as NodesetManifest;
    expect(() => policy.init!({ dir: tmp, manifest })).toThrow(/weights\.json: biases\[1\] must be 16 finite numbers/);
  });

  it('computes the forward pass in float64, row by row', () => {
    const net = packWeights({
      format: 'policy_mlp/v1',
      layers: [2, 2, 1],
      activation: 'tanh',
      inputScale: [1, 0.5],
      weights: [
        [1, 0, 0, 1],
        [1, -1],
      ],
      biases: [[0, 0.25], [0.5]],
    });
    // hidden = tanh([x0, x1/2 + 0.25]); out = 0.5 + h0 − h1, summed bias first, inputs in order.
    const [y] = forward(net, [0.3, 1]);
    expect(y).toBe(0.5 + 1 * Math.tanh(0.3) + -1 * Math.tanh(0.75));
  });
});
