/** env_dataset in-process: the panel cascade over real dataset folders, load, and the sample outputs. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import envDataset from '../../../src/nodesets/env_dataset/handlers.js';
import type { NodesetManifest } from '../../../src/core/types.js';
import { ctxFor } from '../drive.js';

let ws: string;
const saved = process.env.ACTIVE_WORKSPACE_DIR;
const panel = envDataset.panel!;
const sample = envDataset.functions!.sample!;

beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), 'env-dataset-'));
  await mkdir(join(ws, 'datasets', 'tiny'), { recursive: true });
  await writeFile(
    join(ws, 'datasets', 'tiny', 'train.jsonl'),
    [
      {
        id: 'x1',
        input: [{ role: 'user', content: 'Pick' }],
        choices: ['red', 'blue'],
        target: 'B',
        metadata: { cluster: 7, task: 'colours' },
      },
      { id: 'x2', input: 'No target here' },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n'),
  );
  await mkdir(join(ws, 'datasets', 'broken'), { recursive: true });
  await writeFile(join(ws, 'datasets', 'broken', 'test.jsonl'), '{"input":"ok"}\n{"input":\n');
  process.env.ACTIVE_WORKSPACE_DIR = ws;
  await envDataset.init!({ dir: ws, manifest: {} as NodesetManifest });
});
afterAll(async () => {
  if (saved === undefined) delete process.env.ACTIVE_WORKSPACE_DIR;
  else process.env.ACTIVE_WORKSPACE_DIR = saved;
  await rm(ws, { recursive: true, force: true });
});

describe('env_dataset panel', () => {
  it('offers every dataset, the default split first, and one episode per sample', () => {
    expect(panel.options('dataset', {})).toEqual(['arith', 'broken', 'mcq', 'sentiment', 'shell_tasks', 'tiny']);
    expect(panel.options('split', { dataset: 'arith' })).toEqual(['test', 'dev']);
    expect(panel.options('split', { dataset: 'tiny' })).toEqual(['train']);
    expect(panel.options('episode', { dataset: 'arith', split: 'dev' })).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('option finds a value as options would, without listing them: the same value or the same text, else none', () => {
    const at = { dataset: 'arith', split: 'dev' };
    const listed = panel.options('episode', at);
    for (const v of [0, 19, '7', 20, -1, 1.5, '07', ' 3', '', 'x']) {
      expect(panel.option!('episode', v, at), JSON.stringify(v)).toBe(listed.find((o) => o === v || String(o) === String(v)));
    }
    expect(panel.option!('split', 'dev', { dataset: 'arith' })).toBe('dev');
    expect(panel.option!('dataset', 'nope', {})).toBeUndefined();
  });

  it('a dataset whose files are bad answers with the file and line; a missing split or sample is named', () => {
    expect(() => panel.options('split', { dataset: 'broken' })).toThrow(
      new RegExp(`^${join(ws, 'datasets', 'broken', 'test.jsonl')}:2: not valid JSON`),
    );
    expect(() => panel.load({ dataset: 'tiny', split: 'test', episode: 0 }, 'k')).toThrow(
      'dataset tiny has no split "test"; splits: train',
    );
    expect(() => panel.load({ dataset: 'tiny', split: 'train', episode: 2 }, 'k')).toThrow(
      'sample 2 is out of range: tiny/train has samples 0..1',
    );
    expect(() => panel.load({ dataset: 'nope', split: 'train', episode: 0 }, 'k')).toThrow(/^unknown dataset "nope"/);
  });

  it('load describes the episode: <dataset>/<split>/<sampleId>, sampleId, cluster, task', async () => {
    expect(await panel.load({ dataset: 'tiny', split: 'train', episode: 0 }, 'r:0')).toEqual({
      episodeId: 'tiny/train/x1',
      scene: 'tiny/train',
      instruction: 'Pick',
      task: 'colours',
      sampleId: 'x1',
      cluster: '7',
    });
    expect(await panel.load({ dataset: 'tiny', split: 'train', episode: 1 }, 'r:1')).toEqual({
      episodeId: 'tiny/train/x2',
      scene: 'tiny/train',
      instruction: 'No target here',
      sampleId: 'x2',
    });
  });
});

describe('env_dataset sample', () => {
  it('emits the loaded sample at every step, with messages ready for a model; never done', async () => {
    await panel.load({ dataset: 'tiny', split: 'train', episode: 0 }, 'r:0');
    for (const step of [0, 1]) {
      const out = await sample({ inputs: {}, config: {}, ctx: ctxFor(step, { episodeKey: 'r:0' }) });
      expect(out).toEqual({
        messages: [{ role: 'user', content: 'Pick\n\nA. red\nB. blue' }],
        target: 'B',
        choices: ['red', 'blue'],
        sample_id: 'x1',
        sample: {
          id: 'x1',
          input: [{ role: 'user', content: 'Pick' }],
          choices: ['red', 'blue'],
          target: 'B',
          metadata: { cluster: 7, task: 'colours' },
        },
      });
      expect(out.done).toBeUndefined();
    }
    await panel.load({ dataset: 'tiny', split: 'train', episode: 1 }, 'r:1');
    const noTarget = await sample({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'r:1' }) });
    expect(Object.keys(noTarget).sort()).toEqual(['messages', 'sample', 'sample_id']);
  });

  it('without a panel load, plays the default dataset and split at the episode index; evict drops the state', async () => {
    const out = await sample({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'fresh:3', episodeIndex: 3 }) });
    expect(out.sample_id).toBe('test-003');
    envDataset.evict!('fresh:3');
    const again = await sample({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'fresh:3', episodeIndex: 4 }) });
    expect(again.sample_id).toBe('test-004');
  });
});
