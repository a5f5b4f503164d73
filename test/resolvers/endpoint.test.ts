/** `endpoints` and `Run.endpoints` through a real server: the shared llm host's limits, read live from its /stats. */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { START_EVAL, startServer, waitFor } from '../app.helpers.js';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub.js';

const WORKSPACE = join(PACKAGE_ROOT, 'test', 'fixtures', 'llm-workspace');
const KEY = 'sk-endpoints-secret-77c1d0';
const saved = { key: process.env.OPENAI_API_KEY, endpoints: process.env.EVAL_LLM_ENDPOINTS };
let stub: OpenAIStub;

beforeAll(async () => {
  stub = await startOpenAIStub({ expectedKey: KEY, faultRate: 0.3, faultSeed: 5, faultKind: 429, retryAfterSec: 0.05 });
  process.env.OPENAI_API_KEY = KEY;
  process.env.EVAL_LLM_ENDPOINTS = stub.baseURL;
});
afterAll(async () => {
  for (const [name, v] of [
    ['OPENAI_API_KEY', saved.key],
    ['EVAL_LLM_ENDPOINTS', saved.endpoints],
  ] as const) {
    if (v === undefined) delete process.env[name];
    else process.env[name] = v;
  }
  await stub.close();
});

const FIELDS = 'baseUrl model nodeset mode level floor cap inFlight waiting answered count429 count503 lastRetryAfterMs pausedForMs runIds';

describe('endpoints', () => {
  it("shows the shared host's endpoint with its level, its 429s and the runs calling it, and no key", async () => {
    const server = await startServer({ scheduler: { workspaceDir: WORKSPACE } });
    try {
      const none = await server.gql(`{ endpoints { ${FIELDS} } }`);
      expect(none).toEqual({ data: { endpoints: [] } });
      const started = await server.gql(START_EVAL, {
        input: {
          graphName: 'llm_fixture_qa',
          episodeCount: 6,
          workerCount: 2,
          overrides: { llm: { base_url: stub.baseURL, cache: false, max_retries: 10, retry_base_ms: 1 } },
        },
      });
      expect(started.errors).toBeUndefined();
      const runId = started.data!.startEval.runId as string;
      await waitFor(
        'the run to finish',
        async () => {
          const r = await server.gql(`query($id: ID!) { run(id: $id) { status } }`, { id: runId });
          const status = r.data?.run?.status as string | undefined;
          return status && !['QUEUED', 'RUNNING'].includes(status);
        },
        40_000,
      );
      const r = await server.gql(`query($id: ID!) { endpoints { ${FIELDS} } run(id: $id) { status endpoints { baseUrl runIds } } }`, {
        id: runId,
      });
      expect(r.errors).toBeUndefined();
      expect(r.data!.run.status).toBe('COMPLETED');
      const faults = stub.stats().faults;
      expect(faults).toBeGreaterThan(0);
      expect(r.data!.endpoints).toEqual([
        {
          baseUrl: stub.baseURL,
          model: 'stub-model',
          nodeset: 'llm',
          mode: 'ADAPTIVE',
          level: expect.any(Number),
          floor: 1,
          cap: 4096,
          inFlight: 0,
          waiting: 0,
          answered: 6,
          count429: faults,
          count503: 0,
          lastRetryAfterMs: 50,
          pausedForMs: expect.any(Number),
          runIds: [runId],
        },
      ]);
      // Cut from its start of 16 by the 429s.
      expect(r.data!.endpoints[0].level).toBeLessThan(16);
      expect(r.data!.run.endpoints).toEqual([{ baseUrl: stub.baseURL, runIds: [runId] }]);
      expect(JSON.stringify(r)).not.toContain(KEY);
    } finally {
      await server.stop();
    }
  });
});
