/**
 * Graphs with llm__chat run end to end through `evalctl run` (real eval process, real hosts,
 * the real openai client) against the stand-in server: events.jsonl per episode, the cache on a
 * re-run, the call budget, retries under injected 429s, infrastructure failures reported apart,
 * the key nowhere in the outputs, and the events over GraphQL.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative as relativePath } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR, PACKAGE_ROOT } from '../../../src/paths.js';
import type { RunSummary } from '../../../src/store/types.js';
import { START_EVAL, startServer, waitFor } from '../../app.helpers.js';
import { startOpenAIStub, type OpenAIStub } from '../../support/openai-stub.js';
import { filesContaining, readEvents as readRunEvents } from '../../support/run-files.js';

const CLI = join(DIST_DIR, 'main.js');
const WORKSPACE = join(PACKAGE_ROOT, 'test', 'fixtures', 'llm-workspace');
const KEY = 'sk-e2e-secret-5f0c2a9d7e';
let stub: OpenAIStub;
let tmp: string;
let outputs: string;

const savedEndpoints = process.env.EVAL_LLM_ENDPOINTS;

beforeAll(async () => {
  stub = await startOpenAIStub({ expectedKey: KEY });
  tmp = await mkdtemp(join(tmpdir(), 'llm-run-'));
  outputs = join(tmp, 'outputs');
  // The stand-in is an endpoint the operator knows: runs may name it in their overrides.
  process.env.EVAL_LLM_ENDPOINTS = stub.baseURL;
});
afterAll(async () => {
  if (savedEndpoints === undefined) delete process.env.EVAL_LLM_ENDPOINTS;
  else process.env.EVAL_LLM_ENDPOINTS = savedEndpoints;
  await stub.close();
  await rm(tmp, { recursive: true, force: true });
});

/** The stand-in and every base URL `sets` name (`llm.base_url=…`), as EVAL_LLM_ENDPOINTS lists them. */
const endpointsOf = (sets: readonly string[]): string =>
  [stub.baseURL, ...sets.filter((s) => s.startsWith('llm.base_url=')).map((s) => s.slice('llm.base_url='.length).replace(/"/g, ''))].join(
    ',',
  );

async function evalctl(graph: string, episodes: number, sets: string[], flags: string[] = []): Promise<RunSummary> {
  return (await evalctlExit(graph, episodes, sets, flags)).summary;
}

async function evalctlExit(
  graph: string,
  episodes: number,
  sets: string[],
  flags: string[] = [],
): Promise<{ summary: RunSummary; exitCode: number; stderr: string }> {
  const r = await execa(
    process.execPath,
    [
      CLI,
      'run',
      graph,
      '--episodes',
      String(episodes),
      '--workers',
      '2',
      '--outputs',
      outputs,
      '--json',
      ...flags,
      ...sets.flatMap((s) => ['--set', s]),
    ],
    {
      reject: false,
      // The endpoints a run names are the operator's to allow: here the stand-in and any the test points a run at.
      env: { ACTIVE_WORKSPACE_DIR: WORKSPACE, OPENAI_API_KEY: KEY, EVAL_LLM_CACHE_DIR: '', EVAL_LLM_ENDPOINTS: endpointsOf(sets) },
    },
  );
  if (!r.stdout.startsWith('{')) throw new Error(`evalctl run failed (${r.exitCode}): ${r.stderr}`);
  return { summary: JSON.parse(r.stdout) as RunSummary, exitCode: r.exitCode ?? -1, stderr: r.stderr };
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  return port;
}

const metric = (s: RunSummary, name: string) => s.aggregateMetrics.find((m) => m.name === name);
const sum = (s: RunSummary, name: string) => s.episodes.reduce((t, e) => t + Number(e.metrics[name] ?? 0), 0);

const readEvents = (runId: string, index: number) => readRunEvents(outputs, runId, index);

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir, { recursive: true })) total += (await stat(join(dir, name))).size;
  return total;
}

describe('llm graphs through evalctl run', () => {
  let firstRun: RunSummary;

  it('answers every episode, writes events.jsonl per episode; a re-run is answered from the cache (0 endpoint calls)', async () => {
    stub.reset();
    firstRun = await evalctl('llm_fixture_qa', 4, [`llm.base_url="${stub.baseURL}"`]);
    expect(firstRun.statusCounts).toEqual({ COMPLETED: 4 });
    expect(metric(firstRun, 'correct')).toMatchObject({ mean: 1, count: 4 });
    expect(metric(firstRun, 'llm_calls')).toMatchObject({ mean: 1 });
    expect(metric(firstRun, 'llm_cache_hits')).toMatchObject({ mean: 0 });
    expect(stub.stats()).toMatchObject({ completions: 4, unauthorized: 0 });
    const events = await readEvents(firstRun.runId, 2);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      step: 0,
      nodeId: 'llm',
      type: 'llm_call',
      messages: [{ role: 'user', content: 'What is 5 + 4?' }],
      response: { role: 'assistant', content: '9' },
      cached: false,
      retries: 0,
    });
    expect(existsSync(join(outputs, 'llm-cache'))).toBe(true);

    stub.reset();
    const again = await evalctl('llm_fixture_qa', 4, [`llm.base_url="${stub.baseURL}"`]);
    expect(stub.stats().requests).toBe(0);
    expect(again.statusCounts).toEqual({ COMPLETED: 4 });
    expect(metric(again, 'correct')).toMatchObject({ mean: 1, count: 4 });
    expect(metric(again, 'llm_cache_hits')).toMatchObject({ mean: 1 });
    expect((await readEvents(again.runId, 0))[0]).toMatchObject({ cached: true });
  });

  it('Episode.events serves the same events over GraphQL', async () => {
    const server = await startServer({ outputsDir: outputs });
    try {
      const r = await server.gql(
        `query($id: ID!) { run(id: $id) { episodes(first: 2) { items { index status events { total events } } } } }`,
        { id: firstRun.runId },
      );
      expect(r.errors).toBeUndefined();
      const items = r.data!.run.episodes.items as Array<{
        index: number;
        events: { total: number; events: Array<Record<string, unknown>> };
      }>;
      expect(items[1]!.events.total).toBe(1);
      expect(items[1]!.events.events[0]).toMatchObject({ type: 'llm_call', nodeId: 'llm', response: { content: '6' } });
    } finally {
      await server.stop();
    }
  });

  it('the tool loop: tool call, tool result, answer; with max_llm_calls 1 every episode ends BUDGET_EXHAUSTED with its partial usage', async () => {
    const ok = await evalctl('llm_fixture_react', 2, [`llm.base_url="${stub.baseURL}"`]);
    expect(ok.statusCounts).toEqual({ COMPLETED: 2 });
    expect(metric(ok, 'correct')).toMatchObject({ mean: 1 });
    expect(metric(ok, 'llm_calls')).toMatchObject({ mean: 2 });
    const events = await readEvents(ok.runId, 1);
    expect(events.map((e) => `${e.step}:${e.type}`)).toEqual(['0:llm_call', '1:llm_call']);
    expect(events[0]).toMatchObject({ tool_calls: [{ function: { name: 'calc', arguments: '{"expression":"4 + 2"}' } }] });

    const capped = await evalctl('llm_fixture_react', 2, [`llm.base_url="${stub.baseURL}"`, 'llm.max_llm_calls=1']);
    expect(capped.statusCounts).toEqual({ BUDGET_EXHAUSTED: 2 });
    expect(capped.episodes[0]).toMatchObject({ steps: 2, metrics: { llm_calls: 1 }, error: 'the call budget of 1 model call(s) is spent' });
  });

  it('with 30 % injected 429s (and Retry-After) every episode completes, the retries are counted, the records are those of a run without faults', async () => {
    const sets = [`llm.base_url="${stub.baseURL}"`, 'llm.cache=false', 'llm.max_retries=8'];
    const clean = await evalctl('llm_fixture_qa', 6, sets);
    stub.setOptions({ expectedKey: KEY, faultRate: 0.3, faultSeed: 3, faultKind: 429, retryAfterSec: 0.02 });
    stub.reset();
    try {
      const s = await evalctl('llm_fixture_qa', 6, sets);
      expect(s.statusCounts).toEqual({ COMPLETED: 6 });
      expect(metric(s, 'correct')).toMatchObject({ mean: 1, count: 6 });
      expect(stub.stats().faults).toBeGreaterThan(0);
      expect(sum(s, 'llm_retries')).toBe(stub.stats().faults);
      // The limiter and the retries change timing only: the records match but for timing and the retry count.
      const record = (ep: RunSummary['episodes'][number]) => {
        const { workerId, durationMs, startedAt, finishedAt, traceId, spanId, ...e } = ep;
        const { llm_latency_ms, llm_retries, ...metrics } = e.metrics;
        return { ...e, metrics };
      };
      expect(s.episodes.map(record)).toEqual(clean.episodes.map(record));
    } finally {
      stub.setOptions({ expectedKey: KEY });
    }
  });

  it('failures that outlast the retries are INFRA_ERROR: counted apart, left out of the accuracy; within maxInfraErrorRate the run completes', async () => {
    // Connection resets on about half the requests, no retries: some episodes answer, the others are infrastructure failures.
    // The circuit breaker is off: five resets in a row would open it, and which plays came after would depend on arrival order.
    stub.setOptions({ expectedKey: KEY, faultRate: 0.5, faultSeed: 1, faultKind: 'reset' });
    stub.reset();
    let s: RunSummary;
    try {
      s = await evalctl(
        'llm_fixture_qa',
        6,
        [`llm.base_url="${stub.baseURL}"`, 'llm.cache=false', 'llm.max_retries=0', 'llm.circuit_failures=0'],
        ['--max-infra-error-rate', '1'],
      );
      const infra = s.statusCounts.INFRA_ERROR ?? 0;
      const done = s.statusCounts.COMPLETED ?? 0;
      expect(infra).toBeGreaterThan(0);
      expect(done).toBeGreaterThan(0);
      expect(infra + done).toBe(6);
      expect(metric(s, 'correct')).toMatchObject({ mean: 1, count: done });
      const failed = s.episodes.find((e) => e.status === 'INFRA_ERROR')!;
      expect(failed.error).toMatch(/failed after 1 attempt\(s\)/);
      expect(s.status).toBe('COMPLETED');
    } finally {
      stub.setOptions({ expectedKey: KEY });
    }
    const events = await readEvents(s.runId, s.episodes.find((e) => e.status === 'INFRA_ERROR')!.index);
    expect(events.map((e) => `${e.type}:${e.kind}`)).toEqual(['infra:failed']);
  });

  it('a 20 MB answer: every episode ends ERROR with the size error naming the URL and the limit, and the run dir stays small', async () => {
    stub.setOptions({ expectedKey: KEY, answerBytes: 20_000_000 });
    stub.reset();
    let s: RunSummary;
    try {
      s = await evalctl('llm_fixture_qa', 4, [`llm.base_url="${stub.baseURL}"`, 'llm.cache=false']);
    } finally {
      stub.setOptions({ expectedKey: KEY });
    }
    expect(s.statusCounts).toEqual({ ERROR: 4 });
    expect(s.episodes[0]!.error).toContain(
      `${stub.baseURL}/chat/completions answered with more than 1048576 bytes (max_response_bytes); the answer was abandoned`,
    );
    // Not retried: one request per episode.
    expect(stub.stats().requests).toBe(4);
    const runDir = join(outputs, 'eval_runs', s.runId);
    const bytes = await dirBytes(runDir);
    console.log(`20 MB answers × 4 episodes: run dir ${bytes} bytes; the stub's sockets took ${stub.stats().bytesWritten} bytes`);
    expect(bytes).toBeLessThan(200_000);
  });

  it('a closed port without preflight: every play ends INFRA_ERROR at once once the circuit opens, and the run FAILED naming the first error', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const url = `http://127.0.0.1:${port}/v1`;
    const t0 = performance.now();
    const { summary: s, exitCode } = await evalctlExit(
      'llm_fixture_qa',
      8,
      [`llm.base_url="${url}"`, 'llm.cache=false', 'llm.retry_base_ms=200'],
      // Two in flight (this graph's default is many per worker), so the plays after them start once the circuit is open.
      ['--no-preflight', '--max-in-flight', '2'],
    );
    console.log(`closed port, 8 episodes on 2 workers: ${Math.round(performance.now() - t0)} ms`);
    expect(s.statusCounts).toEqual({ INFRA_ERROR: 8 });
    expect(exitCode).toBe(3);
    expect(s.status).toBe('FAILED');
    expect(s.error).toEqual({
      code: 'INFRA_ERRORS',
      message: `8 of 8 plays ended INFRA_ERROR; the first, play 0: ${s.episodes[0]!.error}`,
    });
    expect(s.episodes[0]!.error).toMatch(
      new RegExp(`^${url.replaceAll('.', '\\.')} is unreachable: \\d connection failure\\(s\\) in a row, the last: .*ECONNREFUSED`),
    );
    // At most the two plays in flight when it opened made requests; every later one failed without any.
    for (const e of s.episodes.slice(2)) {
      const events = await readEvents(s.runId, e.index);
      expect(events).toEqual([expect.objectContaining({ type: 'infra', kind: 'failed', code: 'LLM_CIRCUIT_OPEN' })]);
    }
  });

  it('a run FAILED with INFRA_ERRORS is retried once its endpoint is up, and ends COMPLETED', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/v1`;
    const { summary: failed, exitCode } = await evalctlExit(
      'llm_fixture_qa',
      2,
      [`llm.base_url="${url}"`, 'llm.cache=false'],
      ['--no-preflight'],
    );
    expect(exitCode).toBe(3);
    expect(failed).toMatchObject({ status: 'FAILED', error: { code: 'INFRA_ERRORS' } });
    const up = await startOpenAIStub({ expectedKey: KEY }, port);
    try {
      const r = await execa(process.execPath, [CLI, 'retry', failed.runId, '--outputs', outputs, '--json'], {
        reject: false,
        env: { ACTIVE_WORKSPACE_DIR: WORKSPACE, OPENAI_API_KEY: KEY, EVAL_LLM_CACHE_DIR: '' },
      });
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'COMPLETED', error: null, statusCounts: { COMPLETED: 2 } });
      // The retry plays under the run's spec: started with --no-preflight, its attempts skip that check too. The one
      // models list is the retry's own question: does the endpoint still serve the model the run played?
      expect(up.stats()).toMatchObject({ modelLists: 1, completions: 2 });
    } finally {
      await up.close();
    }
  });

  it('through the server, takes a workspace given as a relative path (eval processes start in their run folders)', async () => {
    process.env.OPENAI_API_KEY = KEY;
    const relative = relativePath(process.cwd(), WORKSPACE);
    const server = await startServer({ outputsDir: join(outputs, 'server-relative'), scheduler: { workspaceDir: relative } });
    try {
      const started = await server.gql(START_EVAL, {
        input: { graphName: 'llm_fixture_qa', episodeCount: 1, overrides: { llm: { base_url: stub.baseURL } } },
      });
      expect(started.errors).toBeUndefined();
      const id = started.data!.startEval.runId as string;
      const run = await waitFor(
        'the run to end',
        async () => {
          const r = await server.gql(`query($id: ID!) { run(id: $id) { status error { code message } } }`, { id });
          return r.data?.run && !['QUEUED', 'RUNNING'].includes(r.data.run.status) ? r.data.run : undefined;
        },
        40_000,
      );
      expect(run).toMatchObject({ status: 'COMPLETED', error: null });
    } finally {
      await server.stop();
      delete process.env.OPENAI_API_KEY;
    }
  });

  it('a missing key variable is one clear error before anything runs (exit 2, no run directory)', async () => {
    const runs = async () => (existsSync(join(outputs, 'eval_runs')) ? await readdir(join(outputs, 'eval_runs')) : []);
    const before = await runs();
    const r = await execa(process.execPath, [CLI, 'run', 'llm_fixture_qa', '--episodes', '1', '--outputs', outputs], {
      reject: false,
      env: { ACTIVE_WORKSPACE_DIR: WORKSPACE, OPENAI_API_KEY: '' },
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/node "llm" \(llm__chat\) reads its API key from OPENAI_API_KEY, which is not set/);
    // A mistake in the run's own input is named first: the key can wait until the run could start.
    const both = await execa(
      process.execPath,
      [CLI, 'run', 'qa_llm', '--episodes', '1', '--dataset', 'no_such_set', '--outputs', outputs],
      {
        reject: false,
        env: { ACTIVE_WORKSPACE_DIR: WORKSPACE, OPENAI_API_KEY: '' },
      },
    );
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toMatch(/dataset "no_such_set" .*not found/);
    expect(both.stderr).not.toContain('API key');
    expect(await runs()).toEqual(before);
  });

  it('through the server: the shared llm host caches under the outputs of the server; a missing key variable is refused at submit', async () => {
    process.env.OPENAI_API_KEY = KEY;
    const serverOutputs = join(outputs, 'server');
    const server = await startServer({ outputsDir: serverOutputs, scheduler: { workspaceDir: WORKSPACE } });
    try {
      const refused = await server.gql(START_EVAL, {
        input: { graphName: 'llm_fixture_qa', episodeCount: 1, overrides: { llm: { api_key_env: 'LLM_TEST_UNSET_API_KEY' } } },
      });
      expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(refused.errors?.[0]?.message).toMatch(/reads its API key from LLM_TEST_UNSET_API_KEY, which is not set/);
      // A variable that is set but is no model-API key's is never sent to the run's base_url.
      process.env.LLM_TEST_DATABASE_URL = 'postgres://user:pw@db/prod';
      try {
        const other = await server.gql(START_EVAL, {
          input: {
            graphName: 'llm_fixture_qa',
            episodeCount: 1,
            overrides: { llm: { base_url: stub.baseURL, api_key_env: 'LLM_TEST_DATABASE_URL' } },
          },
        });
        expect(other.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(other.errors?.[0]?.message).toMatch(/api_key_env "LLM_TEST_DATABASE_URL" does not name a model-API key/);
        expect(JSON.stringify(other)).not.toContain('postgres://');
      } finally {
        delete process.env.LLM_TEST_DATABASE_URL;
      }
      const started = await server.gql(START_EVAL, {
        input: { graphName: 'llm_fixture_qa', episodeCount: 2, workerCount: 2, overrides: { llm: { base_url: stub.baseURL } } },
      });
      expect(started.errors).toBeUndefined();
      const runId = started.data!.startEval.runId as string;
      const run = await waitFor(
        'the run to finish',
        async () => {
          const r = await server.gql(`query($id: ID!) { run(id: $id) { status statusCounts { status count } } }`, { id: runId });
          const status = r.data?.run?.status as string | undefined;
          return status && !['QUEUED', 'RUNNING'].includes(status) ? r.data!.run : undefined;
        },
        40_000,
      );
      expect(run.status).toBe('COMPLETED');
      const counts = run.statusCounts as Array<{ status: string; count: number }>;
      expect(counts.filter((c) => c.count > 0)).toEqual([{ status: 'COMPLETED', count: 2 }]);
      expect(existsSync(join(serverOutputs, 'llm-cache'))).toBe(true);
    } finally {
      await server.stop();
      delete process.env.OPENAI_API_KEY;
    }
  });

  it('through the server, a closed port: preflight fails the run at once naming the URL; without it the run ends FAILED with INFRA_ERRORS', async () => {
    process.env.OPENAI_API_KEY = KEY;
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    // The operator lets runs name this endpoint (the server reads its policy when it starts).
    process.env.EVAL_LLM_ENDPOINTS = `${stub.baseURL},${url}`;
    const server = await startServer({ outputsDir: join(outputs, 'server-closed'), scheduler: { workspaceDir: WORKSPACE } });
    process.env.EVAL_LLM_ENDPOINTS = stub.baseURL;
    try {
      const ended = async (input: Record<string, unknown>) => {
        const started = await server.gql(START_EVAL, {
          input: { graphName: 'llm_fixture_qa', episodeCount: 2, overrides: { llm: { base_url: url, cache: false } }, ...input },
        });
        expect(started.errors).toBeUndefined();
        const id = started.data!.startEval.runId as string;
        return waitFor(
          'the run to end',
          async () => {
            const r = await server.gql(`query($id: ID!) { run(id: $id) { status episodesDone error { code message } } }`, { id });
            const run = r.data?.run as
              | { status: string; episodesDone: number; error: { code: string; message: string } | null }
              | undefined;
            return run && !['QUEUED', 'RUNNING'].includes(run.status) ? run : undefined;
          },
          40_000,
        );
      };
      const checked = await ended({});
      expect(checked).toMatchObject({ status: 'FAILED', episodesDone: 0, error: { code: 'PREFLIGHT_FAILED' } });
      expect(checked.error!.message).toBe(`connection refused at ${url} (GET ${url}/models, node "llm")`);
      const unchecked = await ended({ preflight: false, maxInfraErrorRate: 0.5 });
      expect(unchecked).toMatchObject({ status: 'FAILED', episodesDone: 2, error: { code: 'INFRA_ERRORS' } });
      expect(unchecked.error!.message).toMatch(
        /^2 of 2 plays ended INFRA_ERROR \(more than maxInfraErrorRate 0\.5\); the first, play 0: .*ECONNREFUSED/,
      );
    } finally {
      await server.stop();
      delete process.env.OPENAI_API_KEY;
    }
  });

  it('the API key is nowhere in the outputs (run dirs, logs, cache)', async () => {
    expect(await filesContaining(outputs, KEY)).toEqual([]);
  });
});
