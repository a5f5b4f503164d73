/**
 * A worker whose env host died and cannot be started again retires; the other workers play its
 * episodes and the run completes with every episode, the crashed one keeping what it measured.
 * Only when no worker is left does the run fail, with the host's error. Real child-process
 * hosts of a workspace nodeset that crashes on purpose and then refuses to start.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/eval-process/run-batch.js';
import { isAlive, makeRun, waitFor, writeWorkspaceGraph } from './run-helpers.js';

const MANIFEST = {
  name: 'fragile_env',
  version: '1.0.0',
  description: "Crashes its host at step 1 of one chosen episode; after that, that worker's host refuses to start.",
  parallelism: 'replicated',
  module: './handlers.mjs',
  functions: [
    {
      name: 'step',
      description: 'Done at step 3; metrics { index }.',
      inputs: [{ name: 'action', optional: true }],
      outputs: [{ name: 'observation' }, { name: 'metrics' }, { name: 'done' }],
    },
    { name: 'act', description: 'Echoes the step.', inputs: [{ name: 'observation' }], outputs: [{ name: 'action' }] },
  ],
};

const HANDLERS = `
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
const marker = process.env.FRAGILE_ENV_MARKER;
const onlyTag = process.env.FRAGILE_ENV_ONLY_TAG;
const lastEpisode = process.env.FRAGILE_ENV_LAST_EPISODE;
const playedAll = process.env.FRAGILE_ENV_MARKER + '.played-all';
// A child-process host gets its worker's tag on its command line.
const tag = process.argv.includes('--tag') ? process.argv[process.argv.indexOf('--tag') + 1] : undefined;
export default {
  async init() {
    // Held until worker 0 has played the run's last episode, so the refusal comes when no work is left.
    if (lastEpisode !== undefined && tag !== onlyTag) while (!existsSync(playedAll)) await sleep(20);
    // Only the worker whose host crashed is refused: another worker's host may boot after the crash.
    if (marker && existsSync(marker) && readFileSync(marker, 'utf8') === String(tag)) throw new Error('fragile_env cannot start again');
    if (onlyTag !== undefined && tag !== onlyTag) throw new Error('fragile_env starts only for worker ' + onlyTag);
  },
  functions: {
    step: async ({ ctx, config }) => {
      if (ctx.episodeIndex === config.crash_episode && ctx.step === 1) {
        writeFileSync(marker, String(tag));
        process.exit(1);
      }
      await sleep(20);
      if (String(ctx.episodeIndex) === lastEpisode && ctx.step >= 3) writeFileSync(playedAll, '');
      return { observation: ctx.step, metrics: { index: ctx.episodeIndex, step: ctx.step }, done: ctx.step >= 3 };
    },
    act: ({ inputs }) => ({ action: inputs.observation }),
  },
};
`;

let tmp: string;
let workspace: string;
const pids: number[] = [];

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'worker-retire-'));
  workspace = join(tmp, 'ws');
  await mkdir(join(workspace, 'graph_nodes', 'fragile_env'), { recursive: true });
  await writeFile(join(workspace, 'graph_nodes', 'fragile_env', 'manifest.json'), JSON.stringify(MANIFEST));
  await writeFile(join(workspace, 'graph_nodes', 'fragile_env', 'handlers.mjs'), HANDLERS);
  await writeWorkspaceGraph(workspace, {
    name: 'fragile',
    nodes: [
      { id: 'env', type: 'fragile_env__step', config: { crash_episode: 0 } },
      { id: 'agent', type: 'fragile_env__act' },
      { id: 'result', type: 'graphOut' },
    ],
    edges: [
      { from: 'env.observation', to: 'agent.observation' },
      { from: 'agent.action', to: 'env.action', loop: true },
      { from: 'env.metrics', to: 'result.metrics' },
    ],
  });
  process.env.FRAGILE_ENV_MARKER = join(tmp, 'crashed');
});

afterEach(async () => {
  delete process.env.FRAGILE_ENV_MARKER;
  delete process.env.FRAGILE_ENV_ONLY_TAG;
  delete process.env.FRAGILE_ENV_LAST_EPISODE;
  for (const pid of pids.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  await rm(tmp, { recursive: true, force: true });
});

async function run(workerCount: number, episodeCount: number, overrides: Record<string, Record<string, unknown>> = {}) {
  const { dir } = await makeRun(join(tmp, 'outputs'), {
    graphName: 'fragile',
    activeWorkspaceDir: workspace,
    episodeCount,
    workerCount,
    overrides,
  });
  const lines: string[] = [];
  const summary = await runBatch({ runDir: dir, onHostStarted: (h) => pids.push(h.pid), log: (m) => lines.push(m) });
  for (const pid of pids) expect(isAlive(pid) ? await waitFor(() => !isAlive(pid), 3000) : true).toBe(true);
  return { summary, lines };
}

describe('a worker whose env host cannot be started again', () => {
  it('retires, and the other workers play its episodes: the run completes with every episode', async () => {
    const { summary, lines } = await run(2, 8);
    expect(summary.status, JSON.stringify(summary.error)).toBe('COMPLETED');
    expect(summary.episodes.map((e) => e.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(summary.statusCounts).toEqual({ CRASHED: 1, COMPLETED: 7 });
    // The crashed episode keeps what it measured before the crash.
    expect(summary.episodes[0]).toMatchObject({ status: 'CRASHED', metrics: { index: 0, step: 0 } });
    for (const e of summary.episodes.slice(1)) expect(e.metrics).toEqual({ index: e.index, step: 3 });
    expect(lines.some((l) => /worker \d retired: its env host could not be started again \(.*fragile_env cannot start again/.test(l))).toBe(
      true,
    );
    // The summary says so too, so the API and the run page can show why the run slowed down.
    expect(summary.retiredWorkers).toEqual([
      {
        workerId: expect.any(Number),
        reason: expect.stringMatching(/^its env host could not be started again \(.*fragile_env cannot start again/),
      },
    ]);
  });

  it('fails the run with the host error when it is the last worker, keeping the crashed episode', async () => {
    const { summary } = await run(1, 4);
    expect(summary.status).toBe('FAILED');
    expect(summary.error?.code).toBe('HOST_ERROR');
    expect(summary.error?.message).toContain('fragile_env cannot start again');
    expect(summary.episodes).toHaveLength(1);
    expect(summary.episodes[0]).toMatchObject({ index: 0, status: 'CRASHED' });
    expect(summary.retiredWorkers).toBeUndefined();
  });

  it('a worker whose host cannot start at all retires at once, and the run completes on the others', async () => {
    // Worker 0's host starts; the others' never do, whichever boots first.
    process.env.FRAGILE_ENV_ONLY_TAG = '0';
    const { summary, lines } = await run(3, 6, { env: { crash_episode: -1 } });
    expect(summary.status, JSON.stringify(summary.error)).toBe('COMPLETED');
    expect(summary.statusCounts).toEqual({ COMPLETED: 6 });
    expect(new Set(summary.episodes.map((e) => e.workerId))).toEqual(new Set([0]));
    expect(
      lines.filter((l) => /worker [12] retired: its env host could not start \(.*fragile_env starts only for worker 0/.test(l)),
    ).toHaveLength(2);
    expect(summary.retiredWorkers?.map((w) => w.workerId).sort()).toEqual([1, 2]);
  });

  it('a worker whose host fails only after the others played every episode retires, and the run still completes', async () => {
    process.env.FRAGILE_ENV_ONLY_TAG = '0';
    process.env.FRAGILE_ENV_LAST_EPISODE = '5';
    const { summary } = await run(3, 6, { env: { crash_episode: -1 } });
    expect(summary.status, JSON.stringify(summary.error)).toBe('COMPLETED');
    expect(summary.statusCounts).toEqual({ COMPLETED: 6 });
    expect(new Set(summary.episodes.map((e) => e.workerId))).toEqual(new Set([0]));
    expect(summary.retiredWorkers?.map((w) => w.workerId).sort()).toEqual([1, 2]);
  });
});
