/**
 * The built-in model graphs (qa_llm, react_llm) over the built-in arith dataset, through the
 * real CLI against the stand-in OpenAI server: results that do not depend on the worker count,
 * a re-run and a rescoring that call the endpoint 0 times, the call budget, retries under
 * injected 429s, a dead endpoint reported apart, and bad input refused before anything runs.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR, PACKAGE_ROOT } from '../../src/paths.js';
import type { RunSummary } from '../../src/store/types.js';
import { type OpenAIStub, startOpenAIStub } from '../support/openai-stub.js';

const CLI = join(DIST_DIR, 'main.js');
const KEY = 'sk-done-when-7c41e9b2a0d35f86';
let stub: OpenAIStub;
let tmp: string;
let outputs: string;
let workspace: string;

beforeAll(async () => {
  stub = await startOpenAIStub({ expectedKey: KEY });
  tmp = await mkdtemp(join(tmpdir(), 'llm-done-when-'));
  outputs = join(tmp, 'outputs');
  workspace = join(tmp, 'workspace');
  await mkdir(join(workspace, 'graphs'), { recursive: true });
  await mkdir(join(workspace, 'datasets', 'broken'), { recursive: true });
});
afterAll(async () => {
  await stub.close();
  await rm(tmp, { recursive: true, force: true });
});

interface Cli {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
}

async function cli(args: string[], env: Record<string, string> = {}): Promise<Cli> {
  const r = await execa(process.execPath, [CLI, ...args, '--outputs', outputs], {
    reject: false,
    env: {
      ACTIVE_WORKSPACE_DIR: workspace,
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: stub.baseURL,
      OPENAI_MODEL: 'stub-model',
      EVAL_LLM_CACHE_DIR: '',
      ...env,
    },
  });
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
}

async function run(graph: string, episodes: number, workers: number, sets: string[], env: Record<string, string> = {}) {
  const args = [
    'run',
    graph,
    '--episodes',
    String(episodes),
    '--workers',
    String(workers),
    '--dataset',
    'arith',
    '--split',
    'test',
    '--json',
  ];
  const r = await cli([...args, ...sets.flatMap((s) => ['--set', s])], env);
  if (!r.stdout.startsWith('{')) throw new Error(`evalctl run failed (${r.exitCode}): ${r.stderr}`);
  return JSON.parse(r.stdout) as RunSummary;
}

/** The stub's call count as a client sees it: GET /stats. */
async function stubRequests(): Promise<number> {
  const r = await fetch(new URL('/stats', stub.baseURL));
  return ((await r.json()) as { requests: number }).requests;
}

const TIMING_FIELDS = new Set(['workerId', 'durationMs', 'startedAt', 'finishedAt', 'llm_latency_ms']);
/** A deep copy without the fields that depend on the clock or the worker. */
function untimed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(untimed);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!TIMING_FIELDS.has(k)) out[k] = untimed(v);
  return out;
}
const comparable = (s: RunSummary) =>
  JSON.stringify({
    episodes: untimed(s.episodes),
    aggregates: untimed(s.aggregateMetrics.filter((m) => !TIMING_FIELDS.has(m.name))),
  });

const metric = (s: RunSummary, name: string) => s.aggregateMetrics.find((m) => m.name === name);
const sum = (s: RunSummary, name: string) => s.episodes.reduce((t, e) => t + Number(e.metrics[name] ?? 0), 0);
const report = async (s: RunSummary) =>
  JSON.parse(await readFile(join(outputs, 'eval_runs', s.runId, 'report.json'), 'utf8')) as Record<string, unknown>;

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    const path = join(dir, name);
    if ((await stat(path)).isFile() && (await readFile(path)).includes(needle)) hits.push(path);
  }
  return hits;
}

describe('qa_llm and react_llm over arith through evalctl', () => {
  it('qa_llm: 1, 4 and 16 workers give identical records and aggregates; a re-run and a rescoring call the endpoint 0 times', async () => {
    const caches = [1, 4, 16].map((w) => join(tmp, `cache-${w}`));
    const runs: RunSummary[] = [];
    for (const [i, workers] of [1, 4, 16].entries()) {
      runs.push(await run('qa_llm', 60, workers, [], { EVAL_LLM_CACHE_DIR: caches[i]! }));
    }
    expect(runs[0]!.statusCounts).toEqual({ COMPLETED: 60 });
    expect(metric(runs[0]!, 'llm_calls')).toMatchObject({ mean: 1, count: 60 });
    expect(metric(runs[0]!, 'llm_cache_hits')).toMatchObject({ mean: 0 });
    expect(comparable(runs[1]!)).toBe(comparable(runs[0]!));
    expect(comparable(runs[2]!)).toBe(comparable(runs[0]!));

    const before = await stubRequests();
    const again = await run('qa_llm', 60, 4, [], { EVAL_LLM_CACHE_DIR: caches[0]! });
    expect(await stubRequests()).toBe(before);
    expect(metric(again, 'llm_cache_hits')).toMatchObject({ mean: 1 });
    expect(again.episodes.map((e) => e.metrics.correct)).toEqual(runs[0]!.episodes.map((e) => e.metrics.correct));

    const r = await cli(['rescore', runs[0]!.runId, '--scorer', 'exact', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await stubRequests()).toBe(before);
    const { report: rescored } = JSON.parse(r.stdout) as {
      report: { scorers: Array<{ scorer: string; rescored: boolean; count: number }> };
    };
    expect(rescored.scorers).toContainEqual(expect.objectContaining({ scorer: 'exact', rescored: true, count: 60 }));
  });

  it('react_llm: the call budget ends episodes BUDGET_EXHAUSTED with their usage', async () => {
    // The stub's tool loop answers in 2 calls, so a budget of 2 would finish: 1 cuts it.
    const ok = await run('react_llm', 4, 2, []);
    expect(ok.statusCounts).toEqual({ COMPLETED: 4 });
    expect(metric(ok, 'llm_calls')).toMatchObject({ mean: 2 });
    const capped = await run('react_llm', 4, 2, ['llm.max_llm_calls=1']);
    expect(capped.statusCounts).toEqual({ BUDGET_EXHAUSTED: 4 });
    for (const e of capped.episodes) {
      expect(e.metrics).toMatchObject({ llm_calls: 1, llm_retries: 0 });
      expect(e.metrics).toHaveProperty('llm_cache_hits');
      expect(e.metrics.prompt_tokens).toBeGreaterThan(0);
      expect(e.metrics.completion_tokens).toBeGreaterThan(0);
    }
  });

  it('react_llm: under 30 % injected 429s every episode completes and the retries equal the faults', async () => {
    stub.setOptions({ expectedKey: KEY, faultRate: 0.3, faultSeed: 5, faultKind: 429 });
    stub.reset();
    try {
      const s = await run('react_llm', 8, 4, ['llm.cache=false', 'llm.max_retries=10']);
      expect(s.statusCounts).toEqual({ COMPLETED: 8 });
      // The stub cannot read word problems, so the answers are wrong; what matters is that all 8 were scored.
      expect(metric(s, 'correct')).toMatchObject({ count: 8 });
      expect(stub.stats().faults).toBeGreaterThan(0);
      expect(sum(s, 'llm_retries')).toBe(stub.stats().faults);
    } finally {
      stub.setOptions({ expectedKey: KEY });
    }
  });

  it('react_llm against a dead endpoint: every episode INFRA_ERROR, counted apart and left out of the accuracy', async () => {
    const port = await closedPort();
    const s = await run('react_llm', 4, 2, [`llm.base_url="http://127.0.0.1:${port}/v1"`, 'llm.max_retries=1']);
    expect(s.statusCounts).toEqual({ INFRA_ERROR: 4 });
    expect(s.status).toBe('COMPLETED');
    expect(metric(s, 'correct')?.count ?? 0).toBe(0);
    const rep = (await report(s)) as {
      infrastructureFailures: { count: number };
      endings: Array<{ status: string; count: number }>;
      scorers: Array<{ count: number; accuracy: number | null }>;
    };
    expect(rep.infrastructureFailures).toMatchObject({ count: 4, rate: 1 });
    expect(rep.endings).toContainEqual(expect.objectContaining({ status: 'INFRA_ERROR', count: 4 }));
    for (const sc of rep.scorers) expect(sc.count).toBe(0);
  });

  it('refuses bad input before anything runs: exit 2 and no run directory', async () => {
    const runsDir = join(outputs, 'eval_runs');
    const list = async () => (existsSync(runsDir) ? (await readdir(runsDir)).sort() : []);
    const before = await list();

    const qa = JSON.parse(await readFile(join(PACKAGE_ROOT, 'graphs', 'qa_llm.json'), 'utf8')) as {
      name: string;
      nodes: Array<{ id: string; type: string }>;
    };
    qa.name = 'qa_fuzzy';
    qa.nodes.find((n) => n.id === 'score')!.type = 'score__fuzzy';
    await writeFile(join(workspace, 'graphs', 'qa_fuzzy.json'), JSON.stringify(qa));
    const fuzzy = await cli(['run', 'qa_fuzzy', '--episodes', '2']);
    expect(fuzzy.exitCode, fuzzy.stderr).toBe(2);
    expect(fuzzy.stderr).toMatch(/score__fuzzy/);

    const noKey = await cli(['run', 'qa_llm', '--episodes', '2'], { OPENAI_API_KEY: '' });
    expect(noKey.exitCode, noKey.stderr).toBe(2);
    expect(noKey.stderr).toMatch(/OPENAI_API_KEY/);

    await writeFile(
      join(workspace, 'datasets', 'broken', 'test.jsonl'),
      '{"id":"a","input":"1 + 1","target":2}\n{"id":"b","input": oops}\n',
    );
    const bad = await cli(['run', 'qa_llm', '--episodes', '2', '--dataset', 'broken', '--split', 'test']);
    expect(bad.exitCode, bad.stderr).toBe(2);
    expect(bad.stderr).toMatch(/broken/);
    expect(bad.stderr).toMatch(/test\.jsonl:2: not valid JSON/);

    expect(await list()).toEqual(before);
  });

  it('no file under the outputs holds the API key', async () => {
    expect(await filesContaining(outputs, KEY)).toEqual([]);
  });
});
