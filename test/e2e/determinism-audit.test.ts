/**
 * The determinism badge on the run page in a real browser: a finished run says "not audited",
 * the button starts an audit through the real scheduler, and the badge then says it was
 * verified at another worker count on the sampled episodes; the scratch run links back.
 */
import { describe, expect, it } from 'vitest';
import { expectAccessible } from './axe.js';
import { graphql, sessionPerTest, waitFor } from './harness.js';

const sessions = sessionPerTest();

describe('determinism audit on the run page', { timeout: 120_000 }, () => {
  it('starts an audit from the button and shows "verified at 1 worker on 4 episodes"', async () => {
    const s = await sessions.open();
    const started = await graphql<{ startEval: { runId: string } }>(
      s.url,
      'mutation($input: StartEvalInput!) { startEval(input: $input) { runId } }',
      { input: { graphName: 'gridnav_planner', episodeCount: 4, workerCount: 2, dataset: 'mini' } },
    );
    const runId = started.startEval.runId;
    await waitFor(
      'the run to complete',
      async () =>
        (await graphql<{ run: { status: string } }>(s.url, 'query($id: ID!) { run(id: $id) { status } }', { id: runId })).run.status ===
        'COMPLETED',
      60_000,
    );
    await s.page.goto(`${s.url}#/runs/${runId}`);
    await s.page.waitForSelector('[data-testid=determinism-badge][data-audit-status=NONE]');
    expect(await s.page.textContent('[data-testid=determinism-badge]')).toBe('determinism: not audited');
    await s.page.click('[data-testid=start-audit]');
    await s.page.waitForSelector('[data-testid=determinism-badge][data-audit-status=PASSED]', { timeout: 60_000 });
    expect(await s.page.textContent('[data-testid=determinism-badge]')).toBe('determinism: verified at 1 worker on 4 episodes');
    await expectAccessible(s.page, 'a run page with its determinism badge');
    await s.screenshot('determinism-verified');

    // Audited again at the run's own 2 workers: a pass there shows replay only, and the badge says so.
    await graphql(s.url, 'mutation($id: ID!) { auditRun(id: $id, workerCount: 2) { status } }', { id: runId });
    await waitFor(
      'the second audit to pass',
      async () => {
        const { audit } = (
          await graphql<{ run: { audit: { status: string; workerCount: number } } }>(
            s.url,
            'query($id: ID!) { run(id: $id) { audit { status workerCount } } }',
            { id: runId },
          )
        ).run;
        return audit.workerCount === 2 && audit.status === 'PASSED';
      },
      60_000,
    );
    await s.page.reload();
    await s.page.waitForSelector('[data-testid=determinism-badge][data-audit-status=PASSED]', { timeout: 60_000 });
    expect(await s.page.textContent('[data-testid=determinism-badge]')).toBe(
      "determinism: replays at the run's own 2 workers on 4 episodes (the worker count not checked)",
    );

    // The scratch run's page points back at the audited run.
    await s.page.click('[data-testid=determinism-audit] a.mono');
    await s.page.waitForSelector(`[data-testid=determinism-audit] a[href$="${runId}"]`);
  });
});
