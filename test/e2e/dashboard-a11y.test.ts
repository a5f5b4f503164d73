/**
 * The dashboard for a keyboard and screen-reader user: axe-core finds no serious or critical
 * violation on any page, an episode row opens from the keyboard, and the open episode's drawer
 * steps through the run with ← and →. Pages with live runs are checked in dashboard.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { expectAccessible } from './axe.js';
import { type Session, sessionPerTest } from './harness.js';
import { writeSyntheticRun } from './synthetic-run.js';

const RUN_ID = '20260101_120000';
const EPISODES = 40;

const sessions = sessionPerTest();

function openWithRun(): Promise<Session> {
  return sessions.open({
    prepare: (out) => writeSyntheticRun(out, { runId: RUN_ID, episodeCount: EPISODES, workerCount: 4 }).then(() => undefined),
  });
}

describe('dashboard accessibility', { timeout: 60_000 }, () => {
  it('has no serious or critical axe-core violation on any page', async () => {
    const s = await openWithRun();
    const { page, url } = s;
    // Every route of web/src/hooks/useHashRoute.ts, each once it has drawn its data.
    const pages: Array<{ hash: string; ready: string[]; what: string }> = [
      { hash: '#/runs', ready: [`[data-testid=runs-table] tr[data-run-id="${RUN_ID}"]`], what: 'the runs list' },
      {
        hash: `#/runs/${RUN_ID}`,
        ready: ['[data-testid=worker-timeline] canvas', '[data-testid=histogram-chart] canvas', '[data-testid=episode-row]'],
        what: 'a run page',
      },
      // Episode 1 ended in an error, so its drawer shows the error box as well.
      {
        hash: `#/runs/${RUN_ID}/episodes/1`,
        ready: ['[data-testid=episode-drawer] .ep-summary', '[data-testid=episode-row]'],
        what: 'a run page with the episode drawer open',
      },
      { hash: '#/queue', ready: ['main .page .panel'], what: 'the queue' },
      {
        hash: '#/new',
        ready: ['[data-testid=new-run-form] select[name=graphName] option[value=gridnav_planner]'],
        what: 'the new-run form',
      },
      { hash: '#/play', ready: ['[data-testid=play]', 'select[name=graphName] option'], what: 'the Play page' },
      { hash: '#/no/such/page', ready: ['.state-error'], what: 'the not-found page' },
    ];
    for (const p of pages) {
      await page.goto(`${url}${p.hash}`);
      for (const sel of p.ready) await page.waitForSelector(sel, { state: 'attached' });
      await expectAccessible(page, p.what);
    }

    // A refused start shows its error beside the field.
    await page.goto(`${url}#/new`);
    await page.waitForSelector('[data-testid=new-run-form] select[name=graphName] option[value=gridnav_planner]', { state: 'attached' });
    await page.selectOption('select[name=graphName]', 'gridnav_planner');
    await page.fill('[name=episodeCount]', '0');
    await page.click('[data-testid=start-run]');
    await page.waitForSelector('[data-testid=error-episodeCount]');
    await expectAccessible(page, 'the new-run form with a refused field');
    await s.screenshot('a11y-refused-start');
  });

  it('opens an episode from the keyboard and steps through episodes with ← and →', async () => {
    const s = await openWithRun();
    const { page, url } = s;
    const hash = () => page.evaluate(() => location.hash);
    const drawerAt = (i: number) => page.waitForSelector(`[data-testid=episode-drawer][aria-label="episode ${i}"] .ep-summary`);

    await page.goto(`${url}#/runs/${RUN_ID}`);
    await page.waitForSelector('[data-testid=episode-row][data-index="2"]');
    await page.focus('[data-testid=episode-row][data-index="2"]');
    await page.keyboard.press('Enter');
    await drawerAt(2);
    expect(await hash()).toBe(`#/runs/${RUN_ID}/episodes/2`);

    await page.keyboard.press('ArrowRight');
    await drawerAt(3);
    expect(await hash()).toBe(`#/runs/${RUN_ID}/episodes/3`);
    for (const i of [2, 1, 0]) {
      await page.keyboard.press('ArrowLeft');
      await drawerAt(i);
    }
    // Nothing comes before the first episode.
    await page.keyboard.press('ArrowLeft');
    await drawerAt(0);
    expect(await hash()).toBe(`#/runs/${RUN_ID}/episodes/0`);

    // In a field the arrows move the caret, not the drawer.
    await page.focus('select[name=ending]');
    await page.keyboard.press('ArrowRight');
    expect(await hash()).toBe(`#/runs/${RUN_ID}/episodes/0`);
    await page.evaluate(() => (document.activeElement as HTMLElement).blur());

    // Nothing comes after the last one either.
    await page.goto(`${url}#/runs/${RUN_ID}/episodes/${EPISODES - 1}`);
    await drawerAt(EPISODES - 1);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowLeft');
    await drawerAt(EPISODES - 2);

    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-testid=episode-drawer]', { state: 'detached' });
    expect(await hash()).toBe(`#/runs/${RUN_ID}`);

    // A sort header is a button the keyboard reaches too.
    await page.focus('[data-sort-key="m:spl"] button');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-sort-key="m:spl"][aria-sort=descending]');
  });
});
