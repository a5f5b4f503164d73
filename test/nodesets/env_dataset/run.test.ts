/**
 * env_dataset in real runs (`evalctl run`: a real eval process, one real env host per worker):
 * episode i plays sample episodeOffset + i of the run's dataset/split whatever the worker
 * count, records carry sampleId and cluster, and a bad selection or a bad dataset file is one
 * clear error: at submit, and again in the eval process before any episode runs.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBatch } from '../../../src/eval-process/run-batch.js';
import { DIST_DIR } from '../../../src/paths.js';
import type { EpisodeRecord, RunSummary } from '../../../src/store/types.js';
import { makeRun } from '../../eval-process/run-helpers.js';

const CLI = join(DIST_DIR, 'main.js');
let ws: string;

/** The sample as graph metrics: its id and target; no scorer, so each episode ends at its one-step budget. */
const PROBE = {
  name: 'dataset_probe',
  step_budget: 1,
  nodes: [
    { id: 'env', type: 'env_dataset__sample' },
    { id: 'out', type: 'graphOut' },
  ],
  edges: [
    { from: 'env.sample_id', to: 'out.sample_id' },
    { from: 'env.target', to: 'out.target' },
  ],
};

beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), 'env-dataset-run-'));
  await mkdir(join(ws, 'graphs'), { recursive: true });
  await writeFile(join(ws, 'graphs', 'dataset_probe.json'), JSON.stringify(PROBE));
  await mkdir(join(ws, 'datasets', 'broken'), { recursive: true });
  await writeFile(join(ws, 'datasets', 'broken', 'test.jsonl'), '{"input":"a"}\n{"input":"b","target":{"no":1}}\n');
});
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

async function run(...args: string[]): Promise<{ exitCode: number; stderr: string; summary: RunSummary }> {
  const r = await execa(process.execPath, [CLI, 'run', 'dataset_probe', '--outputs', join(ws, 'out'), '--json', ...args], {
    reject: false,
    env: { ACTIVE_WORKSPACE_DIR: ws },
  });
  return { exitCode: r.exitCode ?? -1, stderr: r.stderr, summary: JSON.parse(r.stdout) as RunSummary };
}

/** A record without its timing and placement fields. */
const stable = ({ workerId: _w, durationMs: _d, startedAt: _s, finishedAt: _f, ...rest }: EpisodeRecord) => rest;

describe('env_dataset in evalctl run', () => {
  it('plays samples episodeOffset+i of the chosen split, the same with 1 and 3 workers', async () => {
    const one = await run('--dataset', 'mcq', '--split', 'dev', '--episode-offset', '2', '--episodes', '5', '--workers', '1');
    const three = await run('--dataset', 'mcq', '--split', 'dev', '--episode-offset', '2', '--episodes', '5', '--workers', '3');
    expect(one.exitCode, one.stderr).toBe(0);
    expect(three.exitCode, three.stderr).toBe(0);
    const eps = one.summary.episodes;
    expect(eps.map((e) => e.episodeId)).toEqual(['mcq/dev/q026', 'mcq/dev/q027', 'mcq/dev/q028', 'mcq/dev/q029', 'mcq/dev/q054']);
    expect(eps[0]).toMatchObject({
      index: 0,
      status: 'BUDGET_EXHAUSTED',
      sampleId: 'q026',
      cluster: 'weekdays',
      task: 'weekdays',
      scene: 'mcq/dev',
      metrics: { sample_id: 'q026', target: expect.stringMatching(/^[A-D]$/) },
    });
    expect(three.summary.episodes.map(stable)).toEqual(eps.map(stable));
  });

  it('a range past the split, an unknown split or a bad dataset file: one line on stderr at submit, exit 2, no run', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['--dataset', 'arith', '--split', 'dev', '--episode-offset', '18', '--episodes', '3'],
        'episodes 18..20 reach past the end of arith/dev, which has samples 0..19',
      ],
      [
        ['--dataset', 'arith', '--split', 'validation', '--episodes', '1'],
        'split: dataset arith has no split "validation"; splits: dev, test',
      ],
      [
        ['--dataset', 'broken', '--episodes', '1'],
        `${join(ws, 'datasets', 'broken', 'test.jsonl')}:2: field "target": must be a string, a non-empty list of strings or a number, got {"no":1}`,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await execa(process.execPath, [CLI, 'run', 'dataset_probe', '--outputs', join(ws, 'refused'), ...args], {
        reject: false,
        env: { ACTIVE_WORKSPACE_DIR: ws },
      });
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr.trim()).toBe(`evalctl: ${message}`);
    }
    expect(existsSync(join(ws, 'refused', 'eval_runs'))).toBe(false);
  });

  it('the eval process checks the selection too, before any episode (a spec written without the submit check)', async () => {
    const outputs = join(ws, 'direct');
    const range = await makeRun(outputs, {
      graphName: 'dataset_probe',
      episodeCount: 3,
      dataset: 'arith',
      split: 'dev',
      episodeOffset: 18,
      activeWorkspaceDir: ws,
    });
    const r1 = await runBatch({ runDir: range.dir });
    expect(r1).toMatchObject({ status: 'FAILED', episodesDone: 0 });
    expect(r1.error).toEqual({
      code: 'BAD_USER_INPUT',
      message: 'episodes 18..20 are not all offered by env_dataset (arith/dev): it has episode 0..19',
    });
    const bad = await makeRun(outputs, { graphName: 'dataset_probe', episodeCount: 1, dataset: 'broken', activeWorkspaceDir: ws });
    const r2 = await runBatch({ runDir: bad.dir });
    expect(r2).toMatchObject({ status: 'FAILED', episodesDone: 0 });
    expect(r2.error?.message).toBe(
      `${join(ws, 'datasets', 'broken', 'test.jsonl')}:2: field "target": must be a string, a non-empty list of strings or a number, got {"no":1}`,
    );
  });
});
