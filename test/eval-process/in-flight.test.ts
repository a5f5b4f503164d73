/**
 * Episodes in flight apart from workers, through `evalctl run qa_llm` against the stand-in
 * OpenAI server: the records are the same at 1, 64 and 1,024 in flight; a run asking for 256
 * has 256 calls waiting at the stand-in at once, and a cancel then ends every one of them
 * CANCELLED; a node's own lower limit binds and the run says so.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import { readSummary } from '../../src/store/run-dir.js';
import type { RunSummary } from '../../src/store/types.js';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub.js';
import { stripTiming, waitFor } from './run-helpers.js';

const CLI = join(DIST_DIR, 'main.js');
let stub: OpenAIStub;
let tmp: string;
const running = new Set<ResultPromise>();

beforeAll(async () => {
  stub = await startOpenAIStub();
  tmp = await mkdtemp(join(tmpdir(), 'in-flight-'));
});
afterEach(() => {
  stub.release();
  stub.setOptions({});
  stub.reset();
});
afterAll(async () => {
  for (const p of running) p.kill('SIGKILL');
  await Promise.allSettled(running);
  await stub.close();
  await rm(tmp, { recursive: true, force: true });
});

/** `evalctl run qa_llm` over the arith test split with the model cache off. */
function evalctl(extra: string[]): ResultPromise {
  const p = execa(
    process.execPath,
    [
      CLI,
      'run',
      'qa_llm',
      '--dataset',
      'arith',
      '--split',
      'test',
      '--set',
      'llm.cache=false',
      '--outputs',
      join(tmp, 'outputs'),
      ...extra,
    ],
    { reject: false, env: { OPENAI_BASE_URL: stub.baseURL, OPENAI_API_KEY: 'x', OPENAI_MODEL: 'fake-1' } },
  );
  running.add(p);
  void p.finally(() => running.delete(p));
  return p;
}

async function runJson(extra: string[]): Promise<RunSummary> {
  const r = await evalctl([...extra, '--json']);
  if (!String(r.stdout).startsWith('{')) throw new Error(`evalctl run failed (${r.exitCode}): ${String(r.stderr)}`);
  return JSON.parse(String(r.stdout)) as RunSummary;
}

/** The records without timing fields or the model's measured latency, and the aggregates but latency. */
function resultBytes(s: RunSummary): string {
  return JSON.stringify({
    episodes: s.episodes.map((e) => {
      const { llm_latency_ms: _l, ...metrics } = e.metrics;
      return { ...stripTiming(e), metrics };
    }),
    aggregates: s.aggregateMetrics.filter((m) => m.name !== 'llm_latency_ms'),
    statusCounts: s.statusCounts,
  });
}

describe('episodes in flight', () => {
  it('gives byte-identical records and aggregates at 1, 64 and 1,024 in flight (1,024 plays; 1,024 over 4 workers)', async () => {
    const plays = ['--episodes', '64', '--repeats', '16'];
    const one = await runJson([...plays, '--max-in-flight', '1']);
    expect(one.statusCounts).toEqual({ COMPLETED: 1024 });
    expect(one.episodes.every((e) => e.metrics.llm_calls === 1 && e.scores?.[0]?.scorer === 'numeric')).toBe(true);
    for (const [inFlight, workers] of [
      ['64', '1'],
      ['1024', '4'],
    ] as const) {
      stub.reset();
      // A model that takes a while, so the calls overlap and their answers come back out of order.
      stub.setOptions({ latencyMs: 50 });
      const many = await runJson([...plays, '--max-in-flight', inFlight, '--workers', workers]);
      expect(resultBytes(many), `${inFlight} in flight on ${workers} worker(s)`).toBe(resultBytes(one));
      // More than one call at a time reached the endpoint: the run did play several episodes per worker.
      expect(stub.stats().maxInFlight).toBeGreaterThan(Number(workers));
      expect(new Set(many.episodes.map((e) => e.workerId)).size).toBe(Number(workers));
    }
  }, 180_000);

  it('has 256 calls waiting at the endpoint at once when it asks for 256; a cancel then ends them CANCELLED', async () => {
    stub.setOptions({ hold: true });
    const p = evalctl(['--episodes', '80', '--repeats', '4', '--max-in-flight', '256']);
    let stderr = '';
    p.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const reached = await waitFor(() => stub.stats().inFlight === 256, 60_000);
    expect(reached, `in flight at the stand-in: ${stub.stats().inFlight}; ${stderr}`).toBe(true);
    expect(stderr).toContain('concurrency: 256 episode(s) in flight on 1 worker(s), up to 256 each (asked by the run)');
    // None past what was asked.
    expect(stub.stats().maxInFlight).toBe(256);
    p.kill('SIGINT');
    const r = await p;
    expect(r.exitCode, String(r.stderr)).toBe(130);
    const runId = /run (\d{8}_\d{6})/.exec(stderr)?.[1];
    const s = await readSummary(join(tmp, 'outputs', 'eval_runs', runId!));
    expect(s.status).toBe('CANCELLED');
    expect(s.statusCounts).toEqual({ CANCELLED: 256 });
    expect(s.episodes.every((e) => e.status === 'CANCELLED' && e.steps === 0 && e.metrics.llm_calls === undefined)).toBe(true);
    expect(stub.stats().inFlight).toBe(0);
  }, 120_000);

  it('holds to a lower max_concurrency the graph sets, and names it as the bound', async () => {
    stub.setOptions({ hold: true });
    const p = evalctl(['--episodes', '64', '--max-in-flight', '64', '--set', 'llm.max_concurrency=16']);
    let stderr = '';
    p.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    expect(await waitFor(() => stub.stats().inFlight === 16, 60_000), stderr).toBe(true);
    stub.release();
    const r = await p;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(stub.stats().maxInFlight).toBe(16);
    expect(stub.stats().completions).toBe(64);
    expect(String(r.stderr)).toMatch(
      /concurrency: 64 episode\(s\) in flight .*bound by llm\.max_concurrency = 16: node "llm" sets max_concurrency 16/,
    );
  }, 120_000);
});
