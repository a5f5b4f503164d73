/** A run whose model endpoint is down, in a real browser: red on the run page and in the runs list, with the first error. */
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { RUN_STATUS_COLORS } from '../../web/src/lib/statuses.js';
import { graphql, sessionPerTest, waitFor } from './harness.js';

const sessions = sessionPerTest();
const WORKSPACE = join(PACKAGE_ROOT, 'test', 'fixtures', 'llm-workspace');

beforeAll(() => {
  process.env.OPENAI_API_KEY = 'sk-e2e-infra-0b5e7d';
});
afterAll(() => {
  delete process.env.OPENAI_API_KEY;
});

describe('a run against a dead endpoint', { timeout: 120_000 }, () => {
  it('shows FAILED in red with INFRA_ERRORS and the first error, on the run page and in the runs list', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v1`;
    await new Promise<void>((r) => closed.close(() => r()));
    // The operator lets runs name this endpoint; the server reads its policy as it starts.
    process.env.EVAL_LLM_ENDPOINTS = url;
    const s = await sessions.open({ workspaceDir: WORKSPACE }).finally(() => {
      delete process.env.EVAL_LLM_ENDPOINTS;
    });
    const started = await graphql<{ startEval: { runId: string } }>(
      s.url,
      'mutation($i: StartEvalInput!) { startEval(input: $i) { runId } }',
      {
        i: { graphName: 'llm_fixture_qa', episodeCount: 2, preflight: false, overrides: { llm: { base_url: url, cache: false } } },
      },
    );
    const runId = started.startEval.runId;
    await waitFor(
      'the run to end',
      async () =>
        (await graphql<{ run: { status: string } }>(s.url, 'query($id: ID!) { run(id: $id) { status } }', { id: runId })).run.status ===
        'FAILED',
      60_000,
    );
    await s.page.goto(`${s.url}#/runs/${runId}`);
    const alert = await s.page.waitForSelector('[data-testid=run-error]');
    expect(await alert.textContent()).toMatch(
      new RegExp(`^INFRA_ERRORS2 of 2 plays ended INFRA_ERROR; the first, play 0: .*${url.replaceAll('.', '\\.')}`),
    );
    const badge = await s.page.waitForSelector('.run-page .badge[data-status=FAILED]');
    expect(await badge.evaluate((el) => getComputedStyle(el).getPropertyValue('--badge').trim())).toBe(RUN_STATUS_COLORS.FAILED);
    await s.page.goto(`${s.url}#/runs`);
    const row = await s.page.waitForSelector('[data-testid=run-error]');
    expect(await row.textContent()).toMatch(/^2 of 2 plays ended INFRA_ERROR/);
    expect(s.consoleErrors).toEqual([]);
  });
});
