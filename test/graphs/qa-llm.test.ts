/**
 * The built-in qa_llm and react_llm graphs over the built-in datasets, through `evalctl run`
 * against the stand-in OpenAI server: worker count never changes a score, a re-run and a
 * rescore call the model 0 times, the call budget ends episodes BUDGET_EXHAUSTED, and a run
 * refused for a missing key leaves nothing behind.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import type { RunSummary } from '../../src/store/types.js';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub.js';

const CLI = join(DIST_DIR, 'main.js');
const KEY = 'sk-qa-done-7c1e94b2aa';
let stub: OpenAIStub;
let tmp: string;
let outputs: string;

beforeAll(async () => {
  stub = await startOpenAIStub({ expectedKey: KEY });
  tmp = await mkdtemp(join(tmpdir(), 'qa-llm-'));
  outputs = join(tmp, 'outputs');
});
afterAll(async () => {
  await stub.close();
  await rm(tmp, { recursive: true, force: true });
});

function evalctl(args: string[], env: Record<string, string> = {}) {
  return execa(process.execPath, [CLI, ...args], {
    reject: false,
    env: { OPENAI_BASE_URL: stub.baseURL, OPENAI_API_KEY: KEY, OPENAI_MODEL: 'stub-model', ...env },
  });
}

async function run(graph: string, workers: number, cacheDir: string, extra: string[] = []): Promise<RunSummary> {
  const r = await evalctl(
    [
      'run',
      graph,
      '--episodes',
      '60',
      '--workers',
      String(workers),
      '--dataset',
      'arith',
      '--split',
      'test',
      '--outputs',
      outputs,
      '--json',
      ...extra,
    ],
    { EVAL_LLM_CACHE_DIR: cacheDir },
  );
  if (!r.stdout.startsWith('{')) throw new Error(`evalctl run failed (${r.exitCode}): ${r.stderr}`);
  return JSON.parse(r.stdout) as RunSummary;
}

/** What may differ between worker counts: placement and timing fields, and the model's measured latency. */
interface ResultPart {
  aggregates: unknown;
  statusCounts: unknown;
  episodes: Array<{ metrics: Record<string, unknown> }>;
}

function resultPart(s: RunSummary): ResultPart {
  return {
    aggregates: s.aggregateMetrics.filter((m) => m.name !== 'llm_latency_ms'),
    statusCounts: s.statusCounts,
    episodes: s.episodes.map(({ workerId, durationMs, startedAt, finishedAt, ...rest }) => {
      const { llm_latency_ms, ...metrics } = rest.metrics;
      return { ...rest, metrics };
    }),
  };
}

describe('qa_llm over 60 arith samples', () => {
  let one: RunSummary;

  it('gives byte-identical scores and aggregates at 1, 4 and 16 workers', async () => {
    one = await run('qa_llm', 1, join(tmp, 'cache-1'));
    const four = await run('qa_llm', 4, join(tmp, 'cache-4'));
    const sixteen = await run('qa_llm', 16, join(tmp, 'cache-16'));
    expect(one.statusCounts).toEqual({ COMPLETED: 60 });
    expect(one.episodes.every((e) => e.scores?.[0]?.scorer === 'numeric')).toBe(true);
    expect(one.episodes.every((e) => e.sampleId !== undefined && e.metrics.llm_calls === 1)).toBe(true);
    expect(JSON.stringify(resultPart(four))).toBe(JSON.stringify(resultPart(one)));
    expect(JSON.stringify(resultPart(sixteen))).toBe(JSON.stringify(resultPart(one)));
    expect(stub.stats().completions).toBe(180);
  }, 240_000);

  it('answers a second identical run from the cache, and rescores without the model: 0 calls', async () => {
    const before = stub.stats().completions;
    const again = await run('qa_llm', 4, join(tmp, 'cache-1'));
    expect(stub.stats().completions).toBe(before);
    expect(again.episodes.every((e) => e.metrics.llm_cache_hits === 1)).toBe(true);
    expect(JSON.stringify(resultPart(again).episodes)).toBe(
      JSON.stringify(
        resultPart(one).episodes.map((e) => ({
          ...e,
          metrics: { ...e.metrics, llm_cache_hits: 1 },
        })),
      ),
    );
    const r = await evalctl(['rescore', one.runId, '--scorer', 'exact', '--outputs', outputs, '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(stub.stats().completions).toBe(before);
    expect(existsSync(join(outputs, 'eval_runs', one.runId, 'rescores', 'exact.json'))).toBe(true);
  }, 120_000);

  it('ends react_llm episodes BUDGET_EXHAUSTED at a call budget of 1, with their usage kept', async () => {
    const r = await evalctl([
      'run',
      'react_llm',
      '--episodes',
      '3',
      '--workers',
      '3',
      '--outputs',
      outputs,
      '--json',
      '--set',
      'llm.max_llm_calls=1',
      '--set',
      'llm.cache=false',
    ]);
    const s = JSON.parse(r.stdout) as RunSummary;
    expect(s.statusCounts).toEqual({ BUDGET_EXHAUSTED: 3 });
    expect(s.episodes.every((e) => e.metrics.llm_calls === 1 && Number(e.metrics.prompt_tokens) > 0)).toBe(true);
  }, 120_000);

  it('refuses a run whose key variable or model is missing before anything runs, and no file holds the key', async () => {
    const before = (await readdir(join(outputs, 'eval_runs'))).length;
    const r = await evalctl(['run', 'qa_llm', '--episodes', '2', '--outputs', outputs], { OPENAI_API_KEY: '' });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('OPENAI_API_KEY');
    expect((await readdir(join(outputs, 'eval_runs'))).length).toBe(before);
    const noModel = await evalctl(['run', 'qa_llm', '--episodes', '2', '--outputs', outputs], { OPENAI_MODEL: '' });
    expect(noModel.exitCode).toBe(2);
    // Once: the key check and the model check each report their own problem.
    expect(noModel.stderr.match(/names no model/g)).toHaveLength(1);
    expect((await readdir(join(outputs, 'eval_runs'))).length).toBe(before);
    const hits: string[] = [];
    for (const name of await readdir(tmp, { recursive: true })) {
      const path = join(tmp, name);
      if ((await stat(path)).isFile() && (await readFile(path)).includes(KEY)) hits.push(path);
    }
    expect(hits).toEqual([]);
  }, 60_000);
});
