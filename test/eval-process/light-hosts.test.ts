/**
 * The dataset env and the scorers are served on the eval process's own thread: a dataset run
 * gives the bytes of the same run with every host a child process, starts no host process, and
 * two runs in one process each read their own workspace's datasets (the env's state is its
 * host's, not the process's). The server lends neither: only shared nodesets that batch, or
 * that run in a thread or a process of their own.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GraphSpec } from '../../src/core/types.js';
import { IN_PROCESS_ENV } from '../../src/eval-process/in-process-host.js';
import { runBatch } from '../../src/eval-process/run-batch.js';
import { inspectRunGraph } from '../../src/scheduler/run-graph.js';
import type { RunSummary } from '../../src/store/types.js';
import { makeRun, resultBytes } from './run-helpers.js';

let tmp: string;
const pids: number[] = [];

/** The sample's id scored against its target (numeric: 1 where the id is the target's number), and the target against itself (exact). */
const PROBE: GraphSpec = {
  name: 'dataset_scores',
  step_budget: 2,
  nodes: [
    { id: 'env', type: 'env_dataset__sample' },
    { id: 'num', type: 'score__numeric' },
    { id: 'exact', type: 'score__exact' },
    { id: 'result', type: 'graphOut' },
    { id: 'out', type: 'graphOut' },
  ],
  edges: [
    { from: 'env.sample_id', to: 'num.answer' },
    { from: 'env.target', to: 'num.target' },
    { from: 'env.target', to: 'exact.answer' },
    { from: 'env.target', to: 'exact.target' },
    { from: 'num.score', to: 'result.score' },
    { from: 'num.metrics', to: 'result.metrics' },
    { from: 'env.sample_id', to: 'out.sample_id' },
    { from: 'exact.done', to: 'out.exact_done' },
  ],
};

/** A workspace with the probe graph and a dataset `tiny` whose sample ids carry `tag`; half of the ids are the target. */
async function workspace(tag: string): Promise<string> {
  const ws = join(tmp, tag);
  await mkdir(join(ws, 'graphs'), { recursive: true });
  await writeFile(join(ws, 'graphs', `${PROBE.name}.json`), JSON.stringify(PROBE));
  await mkdir(join(ws, 'datasets', 'tiny'), { recursive: true });
  const rows = Array.from({ length: 6 }, (_, i) => ({ id: i % 2 === 0 ? String(10 + i) : `${tag}${i}`, input: `q${i}`, target: 10 + i }));
  await writeFile(join(ws, 'datasets', 'tiny', 'test.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
  return ws;
}

async function play(ws: string, workerCount: number, hostEnv: Record<string, string> = {}) {
  const { dir } = await makeRun(join(tmp, 'outputs'), {
    graphName: PROBE.name,
    episodeCount: 6,
    workerCount,
    dataset: 'tiny',
    split: 'test',
    activeWorkspaceDir: ws,
  });
  const processes: string[] = [];
  const summary: RunSummary = await runBatch({
    runDir: dir,
    cores: 64,
    ...(Object.keys(hostEnv).length > 0 ? { hostEnv } : {}),
    onHostStarted: (h) => {
      processes.push(h.nodeset);
      if (h.pid !== null) pids.push(h.pid);
    },
  });
  return { summary, processes };
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'light-hosts-'));
});
afterAll(async () => {
  for (const pid of pids)
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  await rm(tmp, { recursive: true, force: true });
});

describe('env_dataset and score on the eval process thread', () => {
  it('give the bytes of host processes, start none, and each run reads its own workspace', async () => {
    const [a, b] = await Promise.all([workspace('a'), workspace('b')]);
    const inline = await play(a, 2);
    const processes = await play(a, 2, { [IN_PROCESS_ENV]: '0' });
    expect(inline.summary.status).toBe('COMPLETED');
    expect(inline.processes).toEqual([]);
    expect(processes.processes.sort()).toEqual(['env_dataset', 'score']);
    expect(resultBytes(inline.summary)).toBe(resultBytes(processes.summary));
    expect(inline.summary.episodes.map((e) => [e.sampleId, e.metrics.score, e.metrics.correct])).toEqual([
      ['10', 1, true],
      ['a1', 0, false],
      ['12', 1, true],
      ['a3', 0, false],
      ['14', 1, true],
      ['a5', 0, false],
    ]);
    // The same process, another workspace: its own samples, not those the first run's host read.
    const other = await play(b, 1);
    expect(other.summary.episodes.map((e) => e.sampleId)).toEqual(['10', 'b1', '12', 'b3', '14', 'b5']);
  }, 60_000);

  it('the server lends the shared model host of qa_llm, not its env or scorer', async () => {
    const info = await inspectRunGraph({ graphName: 'qa_llm' });
    expect(info.shared).toEqual(['llm']);
    const planned = await inspectRunGraph({ graphName: 'gridnav_planner' });
    expect(planned.shared).toEqual(['planner']);
  });
});
