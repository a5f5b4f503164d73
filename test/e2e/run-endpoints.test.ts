/** A live model-backed run in a real browser: the run page shows its endpoint's limit now and the 429s it answered. */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub.js';
import { graphql, sessionPerTest, waitFor } from './harness.js';

const sessions = sessionPerTest();
const WORKSPACE = join(PACKAGE_ROOT, 'test', 'fixtures', 'llm-workspace');
const KEY = 'sk-e2e-endpoints-4c2a91';
let stub: OpenAIStub;

beforeAll(async () => {
  // Slow enough that the run is still live while the page polls; a third of the calls refused with 429.
  stub = await startOpenAIStub({ expectedKey: KEY, latencyMs: 300, faultRate: 0.3, faultSeed: 2, faultKind: 429 });
  process.env.OPENAI_API_KEY = KEY;
});
afterAll(async () => {
  delete process.env.OPENAI_API_KEY;
  await stub.close();
});

describe('the run page while a model-backed run is live', { timeout: 120_000 }, () => {
  it("shows the endpoint's current level and its 429 count", async () => {
    process.env.EVAL_LLM_ENDPOINTS = stub.baseURL;
    const s = await sessions.open({ workspaceDir: WORKSPACE }).finally(() => {
      delete process.env.EVAL_LLM_ENDPOINTS;
    });
    const started = await graphql<{ startEval: { runId: string } }>(
      s.url,
      'mutation($i: StartEvalInput!) { startEval(input: $i) { runId } }',
      {
        i: {
          graphName: 'llm_fixture_qa',
          episodeCount: 200,
          workerCount: 2,
          // Two calls at a time, so the 200 episodes take about 30 s: the run is still live while the page polls.
          maxInFlight: 2,
          overrides: { llm: { base_url: stub.baseURL, cache: false, retry_base_ms: 1, max_retries: 10 } },
        },
      },
    );
    const runId = started.startEval.runId;
    await s.page.goto(`${s.url}#/runs/${runId}`);
    const panel = await s.page.waitForSelector('[data-testid=run-endpoints]', { timeout: 30_000 });
    expect(await panel.textContent()).toContain(`${stub.baseURL} · stub-model`);
    const shown429 = await waitFor('a 429 on the page', async () => {
      const n = Number(await s.page.$eval('[data-testid=endpoint-429]', (el) => el.firstChild?.textContent ?? ''));
      return n > 0 ? n : undefined;
    });
    expect(shown429).toBeGreaterThan(0);
    const level = Number(await s.page.$eval('[data-testid=endpoint-level]', (el) => el.textContent));
    expect(level).toBeGreaterThanOrEqual(1);
    expect(await panel.textContent()).not.toContain(KEY);
    await graphql(s.url, 'mutation($id: ID!) { cancelRun(id: $id) { id } }', { id: runId });
    expect(s.consoleErrors).toEqual([]);
  });
});
