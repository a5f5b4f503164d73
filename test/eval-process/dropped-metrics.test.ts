/**
 * Metrics a node sends as NaN or ±Infinity, run by the real CLI (a real eval process, the
 * nodeset's host a process of its own, so every value crosses as JSON): the episode does not
 * report them, each aggregate counts them as excluded, and the record names each one with its
 * value, node and step, in episode.json, summary.json and the GraphQL Episode.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import { episodeDir, readSummary } from '../../src/store/run-dir.js';
import type { EpisodeRecord, RunSummary } from '../../src/store/types.js';
import { startServer } from '../app.helpers.js';

const CLI = join(DIST_DIR, 'main.js');
let tmp: string;
let outputs: string;
let summary: RunSummary;

// Episode 1 sends NaN, Infinity and -Infinity; the others only finite numbers.
const HANDLERS = `export default {
  functions: {
    act: ({ ctx }) => {
      const odd = ctx.episodeIndex === 1;
      return {
        metrics: { reward: odd ? Number.NaN : 1, spl: odd ? Number.POSITIVE_INFINITY : 0.5, ok: true },
        distance: odd ? Number.NEGATIVE_INFINITY : 3,
        done: true,
      };
    },
  },
};
`;
const MANIFEST = {
  name: 'metrics_fixture',
  version: '1.0.0',
  description: 'Test nodeset: finite metrics, except in episode 1.',
  parallelism: 'replicated',
  module: 'handlers.mjs',
  functions: [{ name: 'act', inputs: [], outputs: [{ name: 'metrics' }, { name: 'distance' }, { name: 'done' }] }],
  resources: { ramMb: 40 },
};
const GRAPH = {
  name: 'odd_metrics',
  step_budget: 1,
  nodes: [
    { id: 'agent', type: 'metrics_fixture__act' },
    { id: 'result', type: 'graphOut' },
  ],
  edges: [
    { from: 'agent.metrics', to: 'result.metrics' },
    { from: 'agent.distance', to: 'result.distance' },
  ],
};

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'dropped-metrics-'));
  outputs = join(tmp, 'out');
  const nodeset = join(tmp, 'ws', 'graph_nodes', 'metrics_fixture');
  await mkdir(nodeset, { recursive: true });
  await mkdir(join(tmp, 'ws', 'graphs'), { recursive: true });
  await writeFile(join(nodeset, 'manifest.json'), JSON.stringify(MANIFEST));
  await writeFile(join(nodeset, 'handlers.mjs'), HANDLERS);
  await writeFile(join(tmp, 'ws', 'graphs', 'odd_metrics.json'), JSON.stringify(GRAPH));
  const r = await execa(
    process.execPath,
    [CLI, 'run', 'odd_metrics', '--episodes', '3', '--workers', '1', '--outputs', outputs, '--json'],
    {
      reject: false,
      env: { ACTIVE_WORKSPACE_DIR: join(tmp, 'ws') },
    },
  );
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  summary = JSON.parse(r.stdout) as RunSummary;
}, 60_000);

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const DROPPED = [
  { name: 'reward', value: 'NaN', nodeId: 'agent', step: 0 },
  { name: 'spl', value: 'Infinity', nodeId: 'agent', step: 0 },
  { name: 'distance', value: '-Infinity', nodeId: 'agent', step: 0 },
];

describe('a metric sent as NaN or ±Infinity', () => {
  it('is left out of the episode’s metrics, counted as excluded, and named in its record', async () => {
    expect(summary.statusCounts).toEqual({ COMPLETED: 3 });
    const [even, odd] = summary.episodes;
    expect(odd!.metrics).toEqual({ ok: true });
    expect(odd!.droppedMetrics).toEqual(DROPPED);
    // Right after the metrics it is missing from.
    expect(Object.keys(odd!).slice(4, 6)).toEqual(['metrics', 'droppedMetrics']);
    expect(even!.metrics).toEqual({ reward: 1, spl: 0.5, ok: true, distance: 3 });
    expect(even).not.toHaveProperty('droppedMetrics');
    expect(summary.aggregateMetrics.find((m) => m.name === 'reward')).toMatchObject({ count: 2, excluded: { COMPLETED: 1 } });
    expect(summary.aggregateMetrics.find((m) => m.name === 'ok')).toMatchObject({ count: 3 });

    const runDir = join(outputs, 'eval_runs', summary.runId);
    const record = JSON.parse(await readFile(join(episodeDir(runDir, 1), 'episode.json'), 'utf8')) as EpisodeRecord;
    expect(record.droppedMetrics).toEqual(DROPPED);
    const stored = await readSummary(runDir);
    expect(stored.episodes[1]!.droppedMetrics).toEqual(DROPPED);
  });

  it('is served as Episode.droppedMetrics, empty for an episode without one', async () => {
    const server = await startServer({ outputsDir: outputs });
    try {
      const q = await server.gql(
        `query Q($id: ID!) { run(id: $id) { odd: episode(index: 1) { metrics droppedMetrics { name value nodeId step } } even: episode(index: 0) { droppedMetrics { name } } } }`,
        { id: summary.runId },
      );
      expect(q.errors).toBeUndefined();
      expect(q.data!.run.odd).toEqual({ metrics: { ok: true }, droppedMetrics: DROPPED });
      expect(q.data!.run.even.droppedMetrics).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
