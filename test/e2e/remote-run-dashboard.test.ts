/**
 * A run queued from the command line with `evalctl run --server` is an ordinary run of that
 * server: the dashboard lists it while it runs, its page shows it running and then cancelled,
 * and a cancel through the server's API ends the CLI's wait.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import { graphql, sessionPerTest } from './harness.js';

const CLI = join(DIST_DIR, 'main.js');
const sessions = sessionPerTest();

describe('evalctl run --server in the dashboard', { timeout: 120_000 }, () => {
  it('the runs list and the run page show the CLI-queued run while it runs', async () => {
    const s = await sessions.open();
    const { page } = s;
    await page.goto(`${s.url}#/runs`);
    // 50 ms per step keeps the run going until the test cancels it; nothing waits on that pace.
    const cli = execa(
      process.execPath,
      [
        CLI,
        'run',
        'gridnav_planner',
        '--episodes',
        '200',
        '--workers',
        '1',
        '--set',
        'env.step_latency_ms=50',
        '--name',
        'from the shell',
        '--server',
        s.url,
      ],
      { reject: false, env: { ACTIVE_WORKSPACE_DIR: '' } },
    );
    try {
      const row = page.locator('[data-testid=runs-table] tr[data-status=RUNNING]');
      await row.waitFor({ timeout: 60_000 });
      const runId = await row.getAttribute('data-run-id');
      expect(runId).toBeTruthy();
      expect(await row.locator('.run-name').textContent()).toBe('from the shell');

      await page.goto(`${s.url}#/runs/${runId}`);
      await page.locator(`.run-page[data-run-id="${runId}"][data-status=RUNNING]`).waitFor();
      await graphql(s.url, 'mutation($id: ID!) { cancelRun(id: $id) { id } }', { id: runId });
      await page.locator(`.run-page[data-run-id="${runId}"][data-status=CANCELLED]`).waitFor({ timeout: 30_000 });
      const r = await cli;
      expect(r.stdout + r.stderr).toMatch(/CANCELLED/);
    } finally {
      cli.kill('SIGTERM');
      await cli;
    }
  });
});
