/** The run page's "Retry failed episodes" button in a real browser: a new attempt of the run, followed live to its end. */
import { describe, expect, it } from 'vitest';
import { graphql, sessionPerTest, waitFor } from './harness.js';

const sessions = sessionPerTest();

describe('run page retry', { timeout: 120_000 }, () => {
  it('retries the crashed episodes of a finished run as attempt 2 and follows it', async () => {
    const s = await sessions.open();
    // A graph that crashes its env host at step 2: three quick CRASHED episodes.
    const started = await graphql<{ startEval: { runId: string } }>(
      s.url,
      'mutation($i: StartEvalInput!) { startEval(input: $i) { runId } }',
      {
        i: { graphName: 'gridnav_planner', episodeCount: 3, dataset: 'mini', overrides: { env: { crash_at_step: 2 } } },
      },
    );
    const runId = started.startEval.runId;
    const state = async () =>
      (
        await graphql<{ run: { status: string; attempt: number } }>(s.url, 'query($id: ID!) { run(id: $id) { status attempt } }', {
          id: runId,
        })
      ).run;
    await waitFor('the run to complete', async () => (await state()).status === 'COMPLETED', 60_000);
    await s.page.goto(`${s.url}#/runs/${runId}`);
    const button = await s.page.waitForSelector('[data-testid=retry-run]');
    expect(await button.textContent()).toBe('Retry failed episodes (3)');
    await button.click();
    // The page follows the run as it goes again, then ends.
    await s.page.waitForSelector('.run-page:is([data-status=QUEUED], [data-status=RUNNING])', { timeout: 30_000 });
    await s.page.waitForSelector('.run-page[data-status=COMPLETED]', { timeout: 60_000 });
    expect(await state()).toEqual({ status: 'COMPLETED', attempt: 2 });
    expect(await s.page.textContent('[data-testid=episodes-done]')).toBe('3');
  });
});
