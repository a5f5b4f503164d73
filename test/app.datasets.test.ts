/** GraphQL `datasets` / `dataset(name)` against a real server with a workspace overlay, and dataset episodes read back over the API. */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_EVAL, codeOf, startServer, waitFor, writeDatasetProbeGraph, type TestServer } from './app.helpers.js';

let server: TestServer;
let ws: string;

beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), 'app-datasets-'));
  await mkdir(join(ws, 'datasets', 'chat'), { recursive: true });
  await writeFile(
    join(ws, 'datasets', 'chat', 'eval.jsonl'),
    JSON.stringify({
      input: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Hi?' },
      ],
      target: ['hi', 'hello'],
    }) + '\n',
  );
  await mkdir(join(ws, 'datasets', 'broken'), { recursive: true });
  await writeFile(join(ws, 'datasets', 'broken', 'test.csv'), 'id,input\nb1,\n');
  await writeDatasetProbeGraph(ws, 'dataset_probe');
  const { step_budget: _, ...unbudgeted } = JSON.parse(await readFile(join(ws, 'graphs', 'dataset_probe.json'), 'utf8'));
  await writeFile(join(ws, 'graphs', 'probe_no_budget.json'), JSON.stringify({ ...unbudgeted, name: 'probe_no_budget' }));
  server = await startServer({ scheduler: { workspaceDir: ws } });
});
afterAll(async () => {
  await server?.stop();
  await rm(ws, { recursive: true, force: true });
});

describe('GraphQL datasets', () => {
  it('lists every dataset with its splits and counts; a broken one with its error and no splits', async () => {
    const r = await server.gql<{ datasets: Array<Record<string, any>> }>(
      '{ datasets { name source sampleCount defaultSplit labels error splits { name sampleCount } } }',
    );
    expect(r.errors).toBeUndefined();
    const byName = Object.fromEntries(r.data!.datasets.map((d) => [d.name, d]));
    expect(Object.keys(byName)).toEqual(['arith', 'broken', 'chat', 'mcq', 'sentiment', 'shell_tasks']);
    expect(byName.arith).toEqual({
      name: 'arith',
      source: 'builtin',
      sampleCount: 100,
      defaultSplit: 'test',
      labels: null,
      error: null,
      splits: [
        { name: 'dev', sampleCount: 20 },
        { name: 'test', sampleCount: 80 },
      ],
    });
    expect(byName.sentiment!.labels).toEqual(['positive', 'negative', 'neutral']);
    expect(byName.chat).toMatchObject({ source: 'workspace', sampleCount: 1, defaultSplit: 'eval' });
    expect(byName.broken).toMatchObject({
      sampleCount: 0,
      splits: [],
      error: `${join(ws, 'datasets', 'broken', 'test.csv')}:2: field "input": is missing (a string or a list of chat messages)`,
    });
  });

  it('dataset(name): a preview of the first samples of a split, clusters and the chat input as JSON', async () => {
    const r = await server.gql<{ mcq: any; chat: any }>(`{
      mcq: dataset(name: "mcq") {
        description
        split(name: "dev") { sampleCount clusters preview(first: 2, offset: 1) { id input target choices cluster metadata } }
      }
      chat: dataset(name: "chat") { splits { preview { id input target choices cluster } } }
    }`);
    expect(r.errors).toBeUndefined();
    expect(r.data!.mcq.description).toMatch(/^Four-way multiple-choice/);
    const dev = r.data!.mcq.split;
    expect(dev.sampleCount).toBe(12);
    expect(dev.clusters).toEqual(['alphabet', 'capitals', 'fractions', 'prime', 'units', 'weekdays']);
    expect(dev.preview.map((s: { id: string }) => s.id)).toEqual(['q025', 'q026']);
    expect(dev.preview[0].input).toMatch(/^How many minutes are there in \d+ hours\?$/);
    expect(dev.preview[0].choices).toHaveLength(4);
    expect(dev.preview[0].cluster).toBe('units');
    expect(dev.preview[0].metadata).toEqual({ cluster: 'units' });
    expect(r.data!.chat.splits[0].preview).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{16}$/),
        input: [
          { role: 'system', content: 'Be terse.' },
          { role: 'user', content: 'Hi?' },
        ],
        target: ['hi', 'hello'],
        choices: null,
        cluster: null,
      },
    ]);
  });

  it('NOT_FOUND for an unknown dataset, BAD_USER_INPUT for a preview too large', async () => {
    const missing = await server.gql('{ dataset(name: "nope") { name } }');
    expect(codeOf(missing)).toBe('NOT_FOUND');
    expect(missing.errors![0]!.message).toBe('dataset "nope" not found (known: arith, broken, chat, mcq, sentiment, shell_tasks)');
    const big = await server.gql('{ dataset(name: "arith") { splits { preview(first: 101) { id } } } }');
    expect(codeOf(big)).toBe('BAD_USER_INPUT');
  });

  it('a run over a dataset: its episodes answer with sampleId and cluster', async () => {
    const started = await server.gql<{ startEval: { runId: string } }>(START_EVAL, {
      input: { graphName: 'dataset_probe', episodeCount: 2, dataset: 'arith', split: 'dev', episodeOffset: 4 },
    });
    expect(started.errors).toBeUndefined();
    const id = started.data!.startEval.runId;
    const run = await waitFor(
      'the run to finish',
      async () => {
        const r = await server.gql<{ run: any }>(
          `query($id: ID!) { run(id: $id) { status episodes(first: 10) { items { episodeId sampleId cluster metrics } } } }`,
          { id },
        );
        return ['COMPLETED', 'FAILED'].includes(r.data?.run?.status) ? r.data!.run : undefined;
      },
      60_000,
    );
    expect(run.status).toBe('COMPLETED');
    expect(run.episodes.items).toEqual([
      { episodeId: 'arith/dev/dev-004', sampleId: 'dev-004', cluster: 'multi_step', metrics: { target: expect.any(Number) } },
      { episodeId: 'arith/dev/dev-005', sampleId: 'dev-005', cluster: 'addition', metrics: { target: expect.any(Number) } },
    ]);
  });

  it('startEval refuses a dataset selection it cannot play at once: BAD_USER_INPUT for a range, DATASET_INVALID for a bad file', async () => {
    const range = await server.gql(START_EVAL, {
      input: { graphName: 'dataset_probe', episodeCount: 5, dataset: 'mcq', split: 'dev', episodeOffset: 10 },
    });
    expect(codeOf(range)).toBe('BAD_USER_INPUT');
    expect(range.errors![0]!.message).toContain('episodes 10..14 reach past the end of mcq/dev, which has samples 0..11');
    const broken = await server.gql(START_EVAL, { input: { graphName: 'dataset_probe', episodeCount: 1, dataset: 'broken' } });
    expect(codeOf(broken)).toBe('DATASET_INVALID');
    expect(broken.errors![0]!.message).toBe(
      `${join(ws, 'datasets', 'broken', 'test.csv')}:2: field "input": is missing (a string or a list of chat messages)`,
    );
  });

  it('startEval refuses what a built-in env does not offer (gridnav, cart-pole) naming the choices, and queues nothing', async () => {
    const runsBefore = await server.gql<{ runs: { total: number } }>('{ runs { total } }');
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { graphName: 'gridnav_planner', episodeCount: 2, dataset: 'nope' },
        'dataset "nope" is not offered by env_gridnav; choices: mini, standard, large',
      ],
      [
        { graphName: 'cartpole_mlp', episodeCount: 2, split: 'nope' },
        'split "nope" is not offered by env_cartpole; choices: train, val, test',
      ],
      // The env's default dataset and split, and a count past their end.
      [
        { graphName: 'gridnav_planner', episodeCount: 501 },
        'episodes 0..500 are not all offered by env_gridnav (standard/val): it has episode 0..499',
      ],
    ];
    for (const [input, message] of cases) {
      const r = await server.gql(START_EVAL, { input });
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(r.errors![0]!.message).toBe(message);
    }
    const runsAfter = await server.gql<{ runs: { total: number } }>('{ runs { total } }');
    expect(runsAfter.data!.runs.total).toBe(runsBefore.data!.runs.total);
  });
  it("graph.stepBudget is the graph's own, else the default that applies", async () => {
    const r = await server.gql<Record<string, { stepBudget: number | null }>>(
      '{ own: graph(name: "dataset_probe") { stepBudget } unset: graph(name: "probe_no_budget") { stepBudget } }',
    );
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({ own: { stepBudget: 1 }, unset: { stepBudget: 500 } });
  });

  it('graph.episodeChoices lists what the env offers field by field, and how many episodes, before anything is submitted', async () => {
    const ask = async (graph: string, dataset?: string, split?: string) => {
      const r = await server.gql<{ graph: { episodeChoices: Record<string, any> | null } }>(
        `query($g: String!, $d: String, $s: String) {
          graph(name: $g) { episodeChoices(dataset: $d, split: $s) { nodeset episodes problem fields { name label options value } } }
        }`,
        { g: graph, d: dataset ?? null, s: split ?? null },
      );
      expect(r.errors).toBeUndefined();
      return r.data!.graph.episodeChoices!;
    };
    // A module env (gridnav): its defaults, then another dataset and split.
    expect(await ask('gridnav_planner')).toEqual({
      nodeset: 'env_gridnav',
      episodes: 500,
      problem: null,
      fields: [
        { name: 'dataset', label: 'Dataset', options: ['mini', 'standard', 'large'], value: 'standard' },
        { name: 'split', label: 'Split', options: ['train', 'val', 'test'], value: 'val' },
      ],
    });
    expect((await ask('gridnav_planner', 'mini', 'train')).episodes).toBe(1000);
    // A dataset it lacks: the fields after it are unknown, and the reason is given.
    const nope = await ask('gridnav_planner', 'nope');
    expect(nope.fields.map((f: { value: string | null; options: string[] }) => [f.value, f.options.length])).toEqual([
      [null, 3],
      [null, 0],
    ]);
    expect(nope.episodes).toBeNull();
    expect(nope.problem).toBe('dataset "nope" is not offered by env_gridnav; choices: mini, standard, large');
    // env_dataset: the dataset folders (built-in and workspace), the dataset's own default split and its samples.
    const arith = await ask('dataset_probe');
    expect(arith.nodeset).toBe('env_dataset');
    expect(arith.fields).toEqual([
      { name: 'dataset', label: 'Dataset', options: ['arith', 'broken', 'chat', 'mcq', 'sentiment', 'shell_tasks'], value: 'arith' },
      { name: 'split', label: 'Split', options: ['dev', 'test'], value: 'test' },
    ]);
    expect(arith.episodes).toBe(80);
    expect((await ask('dataset_probe', 'arith', 'dev')).episodes).toBe(20);
    expect(await ask('dataset_probe', 'chat')).toMatchObject({
      episodes: 1,
      problem: null,
      fields: [{ value: 'chat' }, { options: ['eval'], value: 'eval' }],
    });
    expect((await ask('dataset_probe', 'arith', 'train')).problem).toBe('split "train" is not offered by env_dataset; choices: dev, test');
    const broken = await ask('dataset_probe', 'broken');
    expect(broken.episodes).toBeNull();
    expect(broken.problem).toBe(
      `dataset: ${join(ws, 'datasets', 'broken', 'test.csv')}:2: field "input": is missing (a string or a list of chat messages)`,
    );
    const long = await server.gql('query($d: String) { graph(name: "gridnav_planner") { episodeChoices(dataset: $d) { episodes } } }', {
      d: 'x'.repeat(201),
    });
    expect(codeOf(long)).toBe('BAD_USER_INPUT');
    expect(long.errors![0]!.message).toBe('dataset must be at most 200 characters, got 201');
  });
});
