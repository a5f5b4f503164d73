/**
 * The tools nodeset inside a real run: a scripted model asks for tools, the shared tools host
 * runs them and the results reach the model through a loop edge; each episode sees only its
 * own working directory (the previous one was evicted), no server secret, and no working
 * directory outlives the run.
 */
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GraphSpec } from '../../../src/core/types.js';
import { runBatch } from '../../../src/eval-process/run-batch.js';
import { isAlive, makeRun, waitFor, writeWorkspaceGraph } from '../../eval-process/run-helpers.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/nodesets/toolcaller', import.meta.url));
const SECRET = 'tools-loop-secret-0123456789';

let tmp: string;
const saved = { TMPDIR: process.env.TMPDIR, OPENAI_API_KEY: process.env.OPENAI_API_KEY };

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'tool-loop-'));
  // Hosts inherit these: their temp dir is this test's, and a secret is there to leak if anything let it.
  process.env.TMPDIR = join(tmp, 'tmp');
  process.env.OPENAI_API_KEY = SECRET;
  await cp(FIXTURE, join(tmp, 'ws', 'graph_nodes', 'toolcaller'), { recursive: true });
  await mkdir(join(tmp, 'tmp'));
});
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await rm(tmp, { recursive: true, force: true });
});

const graph: GraphSpec = {
  name: 'tool_loop',
  step_budget: 4,
  nodes: [
    { id: 'model', type: 'toolcaller__turn' },
    {
      id: 'tools',
      type: 'tools__run',
      config: {
        builtins: ['calculator'],
        tools: { probe: { command: ['sh', '-c', 'ls -A .. | wc -l; env | grep -c tools-loop-secret || true'] } },
      },
    },
    { id: 'result', type: 'graphOut' },
  ],
  edges: [
    { from: 'model.tool_calls', to: 'tools.tool_calls' },
    { from: 'tools.tool_results', to: 'model.tool_results', loop: true },
    { from: 'model.metrics', to: 'result.metrics' },
  ],
};

describe('tools in a run', { timeout: 60_000 }, () => {
  it('answers the model through the loop edge, one working directory at a time, without secrets, and leaves none behind', async () => {
    const ws = join(tmp, 'ws');
    await writeWorkspaceGraph(ws, graph);
    const { dir } = await makeRun(join(tmp, 'outputs'), {
      graphName: 'tool_loop',
      episodeCount: 3,
      workerCount: 1,
      activeWorkspaceDir: ws,
    });
    const pids: number[] = [];
    const summary = await runBatch({ runDir: dir, onHostStarted: (h) => pids.push(h.pid) });
    expect(summary.status).toBe('COMPLETED');
    expect(summary.episodes.map((e) => [e.status, e.steps, e.metrics])).toEqual(
      [0, 1, 2].map((i) => ['COMPLETED', 2, { calc: i * 7 + 1, siblings: 1, secrets: 0, answered: 2 }]),
    );
    // The tool calls are in the firing log with their results.
    const log = (await readFile(join(dir, 'episodes', 'ep0000', 'log.jsonl'), 'utf8')).trim().split('\n');
    expect(log.some((l) => l.includes('"nodeId":"tools"') && l.includes('tool_results'))).toBe(true);
    expect(await readFile(join(dir, 'episodes', 'ep0000', 'log.jsonl'), 'utf8')).not.toContain(SECRET);

    for (const pid of pids) expect(isAlive(pid) ? await waitFor(() => !isAlive(pid), 5000) : true).toBe(true);
    const left = (await readdir(join(tmp, 'tmp'))).filter((n) => n.startsWith('batch-eval-tools-'));
    expect(left).toEqual([]);
  });
});
