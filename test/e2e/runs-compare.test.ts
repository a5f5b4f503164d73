/**
 * Runs you can tell apart and compare, in a real browser against the real backend: a run whose
 * episodes failed is shown as such, names/tags/notes are set at start and edited, the list's
 * filters live in the address, Run again copies the spec; two runs ticked in the list open the
 * compare page with its forest plot and flipped episodes.
 */
import { describe, expect, it } from 'vitest';
import { expectAccessible } from './axe.js';
import { graphql, sessionPerTest, waitFor } from './harness.js';

const sessions = sessionPerTest();

/** Starts a run through the API and waits until it has finished. */
async function runToEnd(url: string, input: Record<string, unknown>): Promise<string> {
  const d = await graphql<{ startEval: { runId: string } }>(url, 'mutation($in: StartEvalInput!) { startEval(input: $in) { runId } }', {
    in: { graphName: 'gridnav_planner', viaSubprocess: false, ...input },
  });
  const runId = d.startEval.runId;
  await waitFor(
    `run ${runId} to finish`,
    async () =>
      (await graphql<{ run: { status: string } }>(url, 'query($id: ID!) { run(id: $id) { status } }', { id: runId })).run.status ===
      'COMPLETED',
    60_000,
  );
  return runId;
}

// Small runs (10 episodes, a 45-step budget): the planner at epsilon 0.1 reaches the goal in about half of them, at 0.5 in none.
const BASE = { episodeCount: 10, stepBudget: 45 };

describe('runs list and compare', { timeout: 120_000 }, () => {
  it('shows failed episodes, labels, the config that differs and URL filters; edits labels; Run again copies the spec', async () => {
    const s = await sessions.open();
    const plain = await runToEnd(s.url, { ...BASE, name: 'planner eps 0.1', tags: ['baseline'], overrides: { agent: { epsilon: 0.1 } } });
    // The env throws at step 20: every episode still going then ends ERROR.
    const faulty = await runToEnd(s.url, { ...BASE, tags: ['faults'], overrides: { agent: { epsilon: 0.1 }, env: { fail_at_step: 20 } } });

    const page = s.page;
    await page.goto(`${s.url}#/runs`);
    const faultyRow = page.locator(`[data-testid=runs-table] tr[data-run-id="${faulty}"]`);
    const plainRow = page.locator(`[data-testid=runs-table] tr[data-run-id="${plain}"]`);
    await faultyRow.locator('[data-ending=ERROR].problem').waitFor();
    expect(await faultyRow.locator('[data-testid=run-endings]').textContent()).toMatch(/· \d+ errors?/);
    expect(await plainRow.locator('[data-ending=ERROR]').count()).toBe(0);
    expect(await plainRow.locator('.run-name').textContent()).toBe('planner eps 0.1');
    // The one config value that differs between the two runs.
    expect(await faultyRow.locator('.config-chip').allTextContents()).toEqual(['env.fail_at_step=20']);
    expect(await plainRow.locator('.config-chip').allTextContents()).toEqual(['env.fail_at_step=–']);
    await expectAccessible(page, 'the runs list with labels');
    await s.screenshot('runs-labels');

    // Filters go into the address; an address with filters opens filtered.
    await page.fill('input[name=q]', 'eps 0.1');
    await page.waitForFunction(() => location.hash === '#/runs?q=eps+0.1');
    await page.waitForSelector(`tr[data-run-id="${faulty}"]`, { state: 'detached' });
    await page.goto(`${s.url}#/runs?tag=faults`);
    await page.waitForSelector(`tr[data-run-id="${plain}"]`, { state: 'detached' });
    await page.waitForSelector(`tr[data-run-id="${faulty}"]`);

    // Edit the faulty run's labels on its page.
    await page.goto(`${s.url}#/runs/${faulty}`);
    await page.click('[data-testid=edit-labels]');
    await page.fill('[data-testid=labels-form] input[name=name]', 'fault drill');
    await page.fill('[data-testid=labels-form] input[name=tags]', 'faults, drill');
    await page.fill('[data-testid=labels-form] textarea[name=note]', 'env throws at step 20');
    await page.click('[data-testid=save-labels]');
    await page.waitForSelector('[data-testid=run-name]:has-text("fault drill")');
    expect(await page.textContent('[data-testid=run-note]')).toBe('env throws at step 20');
    expect(await page.textContent('h1')).toContain('fault drill');
    await page.click('[data-testid=run-spec] summary');
    await s.screenshot('run-about');
    expect(await page.textContent('[data-testid=run-spec] pre')).toContain('"fail_at_step": 20');

    // Run again: the form holds the whole spec and the current labels.
    await page.click('[data-testid=run-again]');
    await page.waitForSelector('[data-testid=run-again-from]');
    expect(await page.inputValue('[data-testid=new-run-form] input[name=name]')).toBe('fault drill');
    expect(await page.inputValue('[data-testid=new-run-form] input[name=tags]')).toBe('faults, drill');
    expect(await page.inputValue('[data-testid=new-run-form] input[name=stepBudget]')).toBe('45');
    expect(JSON.parse(await page.inputValue('[data-testid=new-run-form] textarea[name=overrides]'))).toEqual({
      agent: { epsilon: 0.1 },
      env: { fail_at_step: 20 },
    });

    await page.goto(`${s.url}#/runs?tag=drill`);
    await page.waitForSelector(`tr[data-run-id="${faulty}"] .run-name:has-text("fault drill")`);
    await page.waitForSelector(`tr[data-run-id="${plain}"]`, { state: 'detached' });
  });

  // Needs the compareRuns resolver.
  it('compares two runs ticked in the list: metrics, forest plot, flipped episodes opening their records', async () => {
    const s = await sessions.open();
    const base = await runToEnd(s.url, { ...BASE, name: 'eps 0.1', overrides: { agent: { epsilon: 0.1 } } });
    const cand = await runToEnd(s.url, { ...BASE, name: 'eps 0.5', overrides: { agent: { epsilon: 0.5 } } });
    const page = s.page;
    await page.goto(`${s.url}#/runs`);
    await page.check(`tr[data-run-id="${cand}"] input[type=checkbox]`);
    await page.check(`tr[data-run-id="${base}"] input[type=checkbox]`);
    await page.click('[data-testid=compare-selected]');
    // The oldest ticked run is the baseline; the address is the comparison.
    await page.waitForFunction((h) => location.hash === h, `#/compare?baseline=${base}&candidates=${cand}`);
    await page.waitForSelector('[data-testid=compare-page]');
    const success = page.locator(`[data-testid=compare-metrics] tr[data-metric=success]`);
    // Worse by the metric's goal (success: higher is better), in red and in words for screen readers.
    expect(await success.locator('td').nth(3).textContent()).toBe('-0.5 (worse)');
    expect(await success.locator('td[data-verdict=WORSE]').count()).toBe(1);
    await page.waitForSelector('figure[data-metric=success] [data-testid=forest-plot][data-rows="1"] [data-testid=forest-ci]', {
      state: 'attached',
    });
    // Every episode the baseline solved and the candidate did not, both sides shown.
    await page.waitForSelector('[data-testid=flip-list][data-flips="5"]');
    expect(await page.locator('[data-testid=flip-pair][data-direction=LOST]').count()).toBe(5);
    await page.locator('[data-testid=flip-pair] img').first().waitFor();
    // The gate: every metric with a goal must beat the baseline; 10 pairs cannot show that, nor its opposite, at α/4.
    const gateSuccess = page.locator('[data-testid=gate-metrics] tr[data-metric=success]');
    await gateSuccess.waitFor();
    expect(await gateSuccess.getAttribute('data-verdict')).toBe('INCONCLUSIVE');
    expect(await gateSuccess.locator('td').nth(1).textContent()).toBe('success > 0');
    expect(await page.locator('[data-testid=gate]').getAttribute('data-verdict')).toBe('INCONCLUSIVE');
    await expectAccessible(page, 'the compare page');
    await s.screenshot('compare');
    // A requirement typed in replaces the default ones; one that cannot be read is said, and the rest of the page stands.
    await page.fill('input[name=gate-requirements]', 'success >= -0.9');
    await page.click('[data-testid=gate-panel] button[type=submit]');
    await page.waitForSelector('[data-testid=gate-metrics] tr[data-metric=success] code:text-is("success >= -0.9")');
    expect(await page.locator('[data-testid=gate-metrics] tbody tr').count()).toBe(1);
    await page.fill('input[name=gate-requirements]', 'success => 0');
    await page.click('[data-testid=gate-panel] button[type=submit]');
    expect(await page.locator('[data-testid=gate-error]').textContent()).toMatch(/requirement "success => 0": not understood/);
    await page.waitForSelector('[data-testid=compare-metrics]');

    // The shared link opens the same comparison; a flipped episode opens in its run.
    const again = await s.newPage();
    await again.goto(await page.inputValue('[data-testid=share-link]'));
    await again.waitForSelector('[data-testid=flip-list][data-flips="5"]');
    await again.close();
    await page.locator('[data-testid=flip-baseline-link]').first().click();
    await page.waitForSelector(`.run-page[data-run-id="${base}"]`);
    await page.waitForSelector('[data-testid=episode-image]');
  });
});
