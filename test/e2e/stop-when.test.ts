/**
 * A run with stopWhen in a real browser: while it plays, the run page shows the anytime-valid
 * interval of candidate − baseline narrowing as the prefix grows; at the end, its verdict and
 * the episode it stopped at.
 */
import { describe, expect, it } from 'vitest';
import { graphql, sessionPerTest, waitFor } from './harness.js';

const sessions = sessionPerTest();
const RUN_STATUS = 'query($id: ID!) { run(id: $id) { status } }';
const START = 'mutation($i: StartEvalInput!) { startEval(input: $i) { runId } }';

describe('a run that stops early', { timeout: 120_000 }, () => {
  it('shows its interval narrowing and its final verdict on the run page', async () => {
    const s = await sessions.open();
    const base = await graphql<{ startEval: { runId: string } }>(s.url, START, {
      i: { graphName: 'gridnav_planner', episodeCount: 200, workerCount: 2, overrides: { agent: { epsilon: 0.3 } } },
    });
    const baseline = base.startEval.runId;
    await waitFor(
      'the baseline to finish',
      async () => (await graphql<{ run: { status: string } }>(s.url, RUN_STATUS, { id: baseline })).run.status === 'COMPLETED',
      60_000,
    );
    const cand = await graphql<{ startEval: { runId: string } }>(s.url, START, {
      i: {
        graphName: 'gridnav_planner',
        episodeCount: 200,
        workerCount: 1,
        overrides: { agent: { epsilon: 0.1 } },
        stopWhen: { when: 'decided', against: baseline, requirements: ['spl > 0'] },
      },
    });
    const runId = cand.startEval.runId;
    await s.page.goto(`${s.url}#/runs/${runId}`);
    // Live: the panel follows the run's progress while it plays.
    const live = await s.page.waitForSelector('.run-page[data-status=RUNNING] [data-testid=stop-when-read]:not(:text-is("0"))', {
      timeout: 60_000,
    });
    expect(Number(await live.textContent())).toBeGreaterThan(0);
    const verdict = await s.page.waitForSelector('.run-page[data-status=COMPLETED] [data-testid=stop-when-verdict]', { timeout: 60_000 });
    expect(await verdict.getAttribute('data-verdict')).toBe('PASS');
    const stopped = await s.page.waitForSelector('[data-testid=stop-when-stopped]');
    const at = Number(/Stopped at episode (\d+) of 200 \(decided\)/.exec((await stopped.textContent()) ?? '')?.[1]);
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(200);
    // The interval's path: one point per prefix read (thinned past 200), narrowing from the first to the last.
    const path = await s.page.waitForSelector('[data-testid=stop-when-path]');
    expect(Number(await path.getAttribute('data-points'))).toBeGreaterThan(10);
    const label = (await path.getAttribute('aria-label')) ?? '';
    const [, a, b, c, d] = /from \[(-?[\d.]+), (-?[\d.]+)\] to \[(-?[\d.]+), (-?[\d.]+)\]/.exec(label) ?? [];
    expect(Number(d) - Number(c)).toBeLessThan(Number(b) - Number(a));
    // Decided a pass: the final interval lies above the bound 0.
    expect(Number(c)).toBeGreaterThanOrEqual(0);
    expect(await (await s.page.waitForSelector('[data-testid=stop-when-interval]')).textContent()).toMatch(/^\[\d/);
  });
});
