import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphExecutor } from '../../src/graph/executor.js';
import { parseGraph, validateGraph, type ValidatedGraph } from '../../src/graph/graph.js';
import { HostClient } from '../../src/host/host-client.js';
import { spawnHost, type HostProcess } from '../../src/host/host-process.js';
import { deriveSeed } from '../../src/core/prng.js';
import { NodesetRegistry } from '../../src/nodeset-registry/registry.js';
import type { ExecutorResult } from '../../src/core/types.js';

const EXAMPLE_DIR = join(import.meta.dirname, '..', '..', 'examples', 'python-env');

describe('examples/python-env: a Python host plugged in through the workspace overlay', () => {
  let tmp: string;
  let registry: NodesetRegistry;
  let graph: ValidatedGraph;
  const hosts: HostProcess[] = [];
  const clients: HostClient[] = [];

  beforeAll(async () => {
    // What the README tells a user to do: copy the folder into <workspace>/graph_nodes/.
    tmp = await mkdtemp(join(tmpdir(), 'python-env-'));
    await mkdir(join(tmp, 'builtin'));
    await cp(EXAMPLE_DIR, join(tmp, 'workspace', 'graph_nodes', 'env_corridor'), { recursive: true });
    registry = await NodesetRegistry.scan({ builtinDir: join(tmp, 'builtin'), workspaceDir: join(tmp, 'workspace') });
    const entry = registry.get('env_corridor');
    expect(entry).toMatchObject({ source: 'workspace', manifest: { command: ['python3', 'host.py'], parallelism: 'replicated' } });
    graph = validateGraph(parseGraph(JSON.parse(await readFile(join(EXAMPLE_DIR, 'graph.json'), 'utf8')), 'graph.json'), registry);
    hosts.push(...(await Promise.all(['0', '1'].map((tag) => spawnHost({ entry, tag })))));
    clients.push(...hosts.map((h) => new HostClient(h.url)));
    registry.attachUrl('env_corridor', hosts[0]!.url);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    registry?.close();
    await Promise.all(hosts.map((h) => h.stop()));
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** What a worker does per episode: select it on its host's panel, load it, run the graph there. */
  async function episode(worker: number, index: number, runSeed = 11): Promise<{ loaded: unknown; result: ExecutorResult }> {
    const client = clients[worker]!;
    const episodeKey = `run:${index}`;
    await client.panelField('dataset', 'corridor');
    await client.panelField('split', 'val');
    await client.panelField('episode', index);
    await client.panelAction('play');
    const loaded = await client.panelLoad(episodeKey);
    const executor = new GraphExecutor({
      graph,
      stepBudget: graph.spec.step_budget!,
      context: { runSeed, episodeIndex: index, seed: deriveSeed(runSeed, index), episodeKey },
      urlOverrides: { env_corridor: hosts[worker]!.url },
    });
    const result = await executor.run();
    await client.evict(episodeKey);
    return { loaded, result };
  }

  it('answers only callers that present its secret (the runtime hands it over in EVAL_HOST_SECRET)', async () => {
    const h = hosts[0]!;
    expect((await fetch(`${h.url}/health`)).status).toBe(401);
    const refused = await fetch(`${h.url}/panel/load`, {
      method: 'POST',
      headers: { authorization: 'Bearer guessed' },
      body: '{"episodeKey":"x"}',
    });
    expect(refused.status).toBe(401);
    expect(await clients[0]!.health()).toMatchObject({ ok: true, nodeset: 'env_corridor' });
  });

  it('serves its manifest, health and panel over the protocol', async () => {
    const [c] = clients;
    expect((await c!.manifest()).name).toBe('env_corridor');
    expect(await c!.health()).toMatchObject({ ok: true, nodeset: 'env_corridor', tag: '0', pid: hosts[0]!.pid });
    const state = await c!.panelField('dataset', 'long_corridor');
    expect(state.values).toEqual({ dataset: 'long_corridor', split: 'test', episode: 0 });
    await expect(c!.panelField('split', 'train')).rejects.toThrow('bad value "train" for panel field "split"; allowed: "test"');
    await expect(
      c!.call({
        function: 'fly',
        inputs: {},
        config: {},
        ctx: { runSeed: 0, episodeIndex: 0, seed: 0, step: 0, episodeKey: 'k', nodeId: 'n' },
      }),
    ).rejects.toThrow(/unknown function "fly" in nodeset "env_corridor"/);
  });

  it('runs the example graph end to end: the greedy agent reaches the goal despite seeded slips', async () => {
    const { loaded, result } = await episode(0, 3);
    expect(loaded).toMatchObject({ episodeId: 'corridor/val/3', instruction: 'walk to the end of the corridor', task: 'corridor' });
    const goal = Number(/corridor of (\d+) cells/.exec((loaded as { scene: string }).scene)![1]);
    expect(result.ending).toBe('completed');
    expect(result.nodeErrors).toEqual([]);
    expect(result.metrics.success).toBe(1);
    expect(result.metrics.distance).toBe(0);
    expect(result.metrics.steps).toBeGreaterThanOrEqual(goal);
    // Iteration 0 only observes; each later iteration makes one move.
    expect(result.steps).toBe((result.metrics.steps as number) + 1);
  });

  it('is deterministic: the same episode on another tagged host (URL override) gives identical metrics', async () => {
    const results = [];
    for (const [worker, index] of [
      [0, 5],
      [1, 5],
      [1, 2],
      [0, 2],
    ] as const)
      results.push(JSON.stringify((await episode(worker, index)).result.metrics));
    expect(results[1]).toBe(results[0]);
    expect(results[3]).toBe(results[2]);
    // A different run seed changes the slips, and so the step count, of at least one of a few episodes.
    const other = [];
    const same = [];
    for (const index of [0, 1, 2, 3]) {
      same.push((await episode(0, index, 11)).result.metrics.steps);
      other.push((await episode(0, index, 12)).result.metrics.steps);
    }
    expect(other).not.toEqual(same);
  });

  it('a node error in the Python host is recorded against its node', async () => {
    // Validation refuses a string for the number `slip`: the bad value is put into the validated graph
    // directly, as a host must still report whatever reaches it.
    const valid = validateGraph(graph.spec, registry);
    const nodes = new Map(
      [...valid.nodes].map(([id, n]) => [id, id === 'env' ? { ...n, node: { ...n.node, config: { slip: 'often' } } } : n]),
    );
    const bad = { ...valid, nodes };
    expect(() =>
      validateGraph(
        { ...graph.spec, nodes: graph.spec.nodes.map((n) => (n.id === 'env' ? { ...n, config: { slip: 'often' } } : n)) },
        registry,
      ),
    ).toThrow(/node "env": config "slip" must be a number, got "often"/);
    const result = await new GraphExecutor({
      graph: bad,
      stepBudget: 10,
      context: { runSeed: 1, episodeIndex: 0, seed: deriveSeed(1, 0), episodeKey: 'bad:0' },
    }).run();
    expect(result.ending).toBe('error');
    expect(result.nodeErrors[0]).toMatchObject({
      nodeId: 'env',
      step: 1,
      message: expect.stringMatching(/could not convert string to float: 'often'/),
    });
  });
});
