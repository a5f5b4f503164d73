/**
 * The dashboard in a real browser against the real backend: start a run from the form and
 * follow it to the end, cancel one, open an episode's picture, see a refused start explained
 * beside its field, play an episode live, and keep a 1,000-episode run's table as quick as a small one's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, WEB_DIST_DIR } from '../../src/paths.js';
import { expectAccessible } from './axe.js';
import { graphql, type Session, type SessionOptions, sessionPerTest, waitFor } from './harness.js';
import { writeSyntheticRun } from './synthetic-run.js';
import { recordSummaryDigest } from '../../src/store/summary-digest.js';

const GRAPH = 'gridnav_planner';
// Small mazes keep the runs short; the cancel and Play tests slow the env down on purpose.

const sessions = sessionPerTest();

function open(opts?: SessionOptions): Promise<Session> {
  return sessions.open(opts);
}

async function startFromForm(page: Page, fields: Record<string, string>): Promise<void> {
  await page.waitForSelector('[data-testid=new-run-form]');
  await page.selectOption('select[name=graphName]', GRAPH);
  for (const [name, value] of Object.entries(fields)) await page.fill(`[name=${name}]`, value);
  await page.click('[data-testid=start-run]');
}

async function runIdFromHash(page: Page): Promise<string> {
  const handle = await page.waitForFunction(() => /^#\/runs\/(\d{8}_\d{6}(?:_\d+)?)$/.exec(location.hash)?.[1], undefined, {
    timeout: 15_000,
  });
  return (await handle.jsonValue()) as string;
}

// Real runs on a busy 2-core machine can take a while to be admitted and to finish.
describe('dashboard', { timeout: 120_000 }, () => {
  it('starts a run from the form and follows it to the end with charts and episodes filled', async () => {
    const s = await open();
    await s.page.goto(`${s.url}#/new`);
    await startFromForm(s.page, { episodeCount: '6', workerCount: '2', dataset: 'mini' });
    const runId = await runIdFromHash(s.page);
    await s.page.waitForSelector(`.run-page[data-run-id="${runId}"]`);
    await s.page.waitForSelector('.run-page[data-status=COMPLETED]', { timeout: 60_000 });

    await s.page.waitForSelector('[data-testid=episode-table][data-rows="6"]');
    expect(await s.page.textContent('[data-testid=episodes-done]')).toBe('6');
    await s.page.waitForSelector('[data-testid=metric-chart][data-points="6"] canvas');
    await s.page.waitForSelector('[data-testid=histogram-chart] canvas');
    await s.page.waitForSelector('[data-testid=worker-timeline][data-bars="6"]');
    expect(await s.page.locator('[data-testid=metric-cards] .card').count()).toBeGreaterThanOrEqual(3);
    expect(await s.page.locator('[data-testid=episode-row]').count()).toBe(6);
    // The manifest: the nodesets the run was made from.
    await s.page.click('[data-testid=reproducibility] summary');
    await s.page.waitForSelector('[data-testid=manifest] >> text=env_gridnav');
    await expectAccessible(s.page, 'a finished run page');
    await s.screenshot('run-completed');

    // The runs table lists it as completed.
    await s.page.goto(`${s.url}#/runs`);
    await s.page.waitForSelector(`[data-testid=runs-table] tr[data-run-id="${runId}"][data-status=COMPLETED]`);
    await s.screenshot('runs');
    // A filter chosen is a history entry: Back returns to the list before it.
    await s.page.selectOption('select[name=status]', 'COMPLETED');
    await s.page.waitForFunction(() => location.hash.includes('status=COMPLETED'));
    await s.page.goBack();
    await s.page.waitForFunction(() => location.hash === '#/runs');
    expect(await s.page.inputValue('select[name=status]')).toBe('');
    // A page past the end says so and links back, instead of "No runs yet".
    await s.page.goto(`${s.url}#/runs?page=40`);
    await s.page.waitForSelector('text=is past the last of 1 runs');
    await s.page.click('text=Go to the first page');
    await s.page.waitForSelector(`[data-testid=runs-table] tr[data-run-id="${runId}"]`);
    // On a phone the page does not scroll sideways: the nav wraps, wide tables scroll inside their panel.
    await s.page.setViewportSize({ width: 390, height: 844 });
    for (const [to, shown] of [
      ['#/runs', '[data-testid=runs-table]'],
      [`#/runs/${runId}`, '[data-testid=report-metrics]'],
      // The one run against itself: refused (a run given twice), and the refusal fits the phone too.
      [`#/compare?baseline=${runId}&candidates=${runId}`, 'text=is given twice'],
      ['#/workers', '[data-testid=workers-empty]'],
    ] as const) {
      await s.page.goto(`${s.url}${to}`);
      await s.page.waitForSelector(shown);
      expect(await s.page.evaluate(() => document.documentElement.scrollWidth), to).toBeLessThanOrEqual(390);
    }
  });

  it('cancels a running run and shows it CANCELLED', async () => {
    const s = await open();
    await s.page.goto(`${s.url}#/new`);
    await startFromForm(s.page, { episodeCount: '40', workerCount: '1', overrides: '{"env": {"step_latency_ms": 50}}' });
    const runId = await runIdFromHash(s.page);
    await s.page.waitForSelector('.run-page[data-status=RUNNING]', { timeout: 30_000 });

    // The queue page shows it among the active jobs, with a cancel button of its own.
    const queue = await s.newPage();
    await queue.goto(`${s.url}#/queue`);
    await queue.waitForSelector(`[data-testid=active-table] tr[data-run-id="${runId}"]`);
    await expectAccessible(queue, 'the queue with a running job');
    await s.screenshot('queue-running', queue);
    await queue.close();

    await expectAccessible(s.page, 'a running run page');
    await s.page.click('[data-testid=cancel-run]');
    await s.page.click('[data-testid=cancel-run]'); // confirm
    await s.page.waitForSelector('.run-page[data-status=CANCELLED]', { timeout: 30_000 });
    const done = Number(await s.page.textContent('[data-testid=episodes-done]'));
    expect(done).toBeLessThan(40);
    await s.screenshot('run-cancelled');
  });

  it("says how a cancelled run's episodes ended without repeating its status", async () => {
    const runId = '20260101_120000';
    const s = await open({
      prepare: (out) => writeSyntheticRun(out, { runId, episodeCount: 6, workerCount: 1, cancelled: 2 }).then(() => undefined),
    });
    // Its six episodes: three completed, one timeout, one error and the last two cut short by the cancel.
    await s.page.goto(`${s.url}#/runs/${runId}`);
    const heading = await s.page.waitForSelector('.run-page[data-status=CANCELLED] h1');
    expect(await heading.$eval('.badge', (el) => el.textContent)).toBe('cancelled');
    expect(await heading.$eval('[data-testid=run-endings]', (el) => el.textContent)).toBe(' · 1 timeout · 1 error · 2 episodes cancelled');

    await s.page.goto(`${s.url}#/runs`);
    const row = s.page.locator(`[data-testid=runs-table] tr[data-run-id="${runId}"][data-status=CANCELLED]`);
    expect(await row.locator('[data-testid=run-endings]').textContent()).toBe(' · 1 timeout · 1 error · 2 episodes cancelled');
  });

  it('shows a finished run whose summary.json was edited afterwards as modified, with its recorded status', async () => {
    const runId = '20260101_120000';
    const s = await open({
      prepare: async (out) => {
        await writeSyntheticRun(out, { runId, episodeCount: 6, workerCount: 1 });
        const dir = join(out, 'eval_runs', runId);
        const text = await readFile(join(dir, 'summary.json'), 'utf8');
        await recordSummaryDigest(dir, text, JSON.parse(text));
        await writeFile(
          join(dir, 'summary.json'),
          JSON.stringify({ ...JSON.parse(text), status: 'RUNNING', finishedAt: null, pid: 999_999 }),
        );
      },
    });
    await s.page.goto(`${s.url}#/runs/${runId}`);
    const notice = await s.page.waitForSelector('.run-page[data-status=COMPLETED] [data-testid=summary-modified]');
    expect(await notice.textContent()).toContain('modified after the run finished');
  });

  it('opens an episode and shows its trajectory image', async () => {
    const s = await open();
    const started = await graphql<{ startEval: { runId: string } }>(
      s.url,
      'mutation($i: StartEvalInput!) { startEval(input: $i) { runId } }',
      {
        i: { graphName: GRAPH, episodeCount: 2, dataset: 'mini' },
      },
    );
    const runId = started.startEval.runId;
    await waitFor(
      'the run to complete',
      async () => {
        const d = await graphql<{ run: { status: string } }>(s.url, 'query($id: ID!) { run(id: $id) { status } }', { id: runId });
        return d.run.status === 'COMPLETED';
      },
      60_000,
    );

    await s.page.goto(`${s.url}#/runs/${runId}`);
    await s.page.click('[data-testid=episode-row][data-index="1"]');
    await s.page.waitForSelector('[data-testid=episode-drawer] [data-testid=episode-image]');
    const width = await s.page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('[data-testid=episode-image]');
      return img?.complete && img.naturalWidth > 0 ? img.naturalWidth : 0;
    });
    expect(await width.jsonValue()).toBeGreaterThan(0);
    expect(await s.page.evaluate(() => location.hash)).toBe(`#/runs/${runId}/episodes/1`);
    await s.page.waitForSelector('[data-testid=episode-log] tbody tr');
    await expectAccessible(s.page, 'the episode drawer with its picture and log');
    await s.screenshot('episode-drawer');
  });

  it("shows a refused start's error beside the field it concerns", async () => {
    const s = await open();
    await s.page.goto(`${s.url}#/new`);
    await startFromForm(s.page, { episodeCount: '0' });
    const err = await s.page.waitForSelector('[data-field=episodeCount] [data-testid=error-episodeCount]');
    expect(await err.textContent()).toMatch(/episodeCount/);
    expect(await s.page.evaluate(() => location.hash)).toBe('#/new');

    await s.page.fill('[name=episodeCount]', '3');
    await s.page.fill('[name=overrides]', '{"no_such_node": {"epsilon": 0.5}}');
    await s.page.click('[data-testid=start-run]');
    const err2 = await s.page.waitForSelector('[data-field=overrides] [data-testid=error-overrides]');
    expect(await err2.textContent()).toMatch(/no_such_node/);
    await s.screenshot('refused-start');

    // Malformed JSON is caught before anything is sent.
    await s.page.fill('[name=overrides]', '{"agent": ');
    expect(await s.page.textContent('[data-field=overrides] .field-error')).toMatch(/JSON/);
    expect(await s.page.isDisabled('[data-testid=start-run]')).toBe(true);

    // A dataset the env does not offer is refused at submit, beside the dataset box, with the choices.
    await s.page.fill('[name=overrides]', '');
    await s.page.fill('[name=dataset]', 'nope');
    await s.page.click('[data-testid=start-run]');
    const err3 = await s.page.waitForSelector('[data-field=dataset] [data-testid=error-dataset]');
    expect(await err3.textContent()).toMatch(/not offered by env_gridnav; choices: mini, standard, large/);
    expect(await s.page.evaluate(() => location.hash)).toBe('#/new');
  });

  it("lists the env's datasets and splits beside their boxes and counts the episodes they hold", async () => {
    const s = await open();
    await s.page.goto(`${s.url}#/new`);
    await s.page.waitForSelector('[data-testid=new-run-form]');
    await s.page.selectOption('select[name=graphName]', GRAPH);
    const options = (id: string) => s.page.$$eval(`#${id} option`, (els) => els.map((e) => (e as HTMLOptionElement).value));
    const splitHint = () => s.page.textContent('[data-field=split] .field-hint');
    await s.page.waitForFunction(() => document.querySelectorAll('#dataset-choices option').length > 0);
    expect(await options('dataset-choices')).toEqual(['mini', 'standard', 'large']);
    expect(await options('split-choices')).toEqual(['train', 'val', 'test']);
    expect(await s.page.getAttribute('[name=dataset]', 'placeholder')).toBe('standard');
    // A blank step budget plays each maze's own budget (the env's), else the graph's 300.
    expect(await s.page.getAttribute('[name=stepBudget]', 'placeholder')).toBe('env or 300');
    await s.page.waitForFunction(() => document.querySelector('[data-field=split] .field-hint')?.textContent?.includes('500'));
    expect(await splitHint()).toBe('500 episodes (indices 0–499)');

    await s.page.fill('[name=dataset]', 'mini');
    await s.page.fill('[name=split]', 'train');
    await s.page.waitForFunction(() => document.querySelector('[data-field=split] .field-hint')?.textContent?.includes('1000'));
    expect(await splitHint()).toBe('1000 episodes (indices 0–999)');
    // A typo shows what is offered before anything is submitted.
    await s.page.fill('[name=dataset]', 'mimi');
    await s.page.waitForFunction(() => document.querySelector('[data-field=split] .field-hint')?.textContent?.includes('mimi'));
    expect(await splitHint()).toBe('dataset "mimi" is not offered by env_gridnav; choices: mini, standard, large');

    await s.page.goto(`${s.url}#/play`);
    await s.page.waitForSelector('[data-testid=play]');
    await s.page.selectOption('select[name=graphName]', GRAPH);
    await s.page.fill('[name=dataset]', 'mini');
    await s.page.waitForFunction(() => document.querySelector('[data-testid=episode-choices]')?.textContent?.includes('200'));
    expect(await s.page.textContent('[data-testid=episode-choices]')).toBe('200 episodes (indices 0–199)');
    expect(await options('play-split-choices')).toEqual(['train', 'val', 'test']);
    expect(await s.page.getAttribute('[name=stepBudget]', 'placeholder')).toBe('env or 300');
    await expectAccessible(s.page, 'the Play form with its dataset choices');
  });

  it("shows a workspace env's declared defaults in the dataset and split boxes, and what a blank step budget plays", async () => {
    // The Python corridor example in a workspace: its picker declares defaults in its manifest, and
    // its graph no step budget.
    const ws = await mkdtemp(join(tmpdir(), 'e2e-workspace-'));
    try {
      const env = join(ws, 'graph_nodes', 'env_corridor');
      await cp(join(PACKAGE_ROOT, 'examples', 'python-env'), env, { recursive: true });
      const manifest = JSON.parse(await readFile(join(env, 'manifest.json'), 'utf8'));
      manifest.panel.fields[0].default = 'long_corridor';
      manifest.panel.fields[1].default = 'test';
      await writeFile(join(env, 'manifest.json'), JSON.stringify(manifest));
      const { step_budget: _, ...graph } = JSON.parse(await readFile(join(env, 'graph.json'), 'utf8'));
      await mkdir(join(ws, 'graphs'));
      await writeFile(join(ws, 'graphs', 'python_corridor.json'), JSON.stringify(graph));

      const s = await open({ workspaceDir: ws });
      const placeholder = (name: string) => s.page.getAttribute(`[name=${name}]`, 'placeholder');
      for (const [to, prefix] of [
        ['#/new', ''],
        ['#/play', 'play-'],
      ] as const) {
        await s.page.goto(`${s.url}${to}`);
        await s.page.selectOption('select[name=graphName]', 'python_corridor');
        await s.page.waitForFunction(() => document.querySelector('[name=dataset]')?.getAttribute('placeholder') === 'long_corridor');
        expect(await placeholder('split'), to).toBe('test');
        // What it offers is known to its host only, which a form does not start.
        expect(await s.page.$$eval(`#${prefix}dataset-choices option`, (els) => els.length), to).toBe(0);
        expect(await placeholder('stepBudget'), to).toBe('env or 500');
      }
    } finally {
      await rm(ws, { recursive: true, force: true });
    }
  });

  it('plays an episode live to its end while the queue page shows the interactive lock', async () => {
    const s = await open();
    await s.page.goto(`${s.url}#/play`);
    await s.page.waitForSelector('[data-testid=play]');
    await s.page.selectOption('select[name=graphName]', GRAPH);
    await s.page.fill('[name=dataset]', 'mini');
    // Long enough (~20 steps of 0.3 s) for the queue page to load and poll the lock (every 2 s) on a loaded machine;
    // at 50 ms the whole play could end before the second page had loaded.
    await s.page.fill('[name=overrides]', '{"env": {"step_latency_ms": 300}}');
    await s.page.click('[data-testid=play]');

    const queue = await s.newPage();
    await queue.goto(`${s.url}#/queue`);
    await queue.waitForSelector('[data-testid=interactive-lock]', { timeout: 15_000 });
    await expectAccessible(queue, 'the queue under the interactive lock');
    await s.screenshot('queue-locked', queue);

    await s.page.waitForSelector('.play-page[data-phase=done]', { timeout: 60_000 });
    const width = await s.page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('[data-testid=play-image]');
      return img?.complete && img.naturalWidth > 0 ? img.naturalWidth : 0;
    });
    expect(await width.jsonValue()).toBeGreaterThan(0);
    expect(await s.page.locator('[data-testid=play-steps] li').count()).toBeGreaterThan(2);
    expect(await s.page.textContent('[data-testid=play-status]')).toMatch(/Finished after \d+ steps/);
    await expectAccessible(s.page, 'the Play page after an episode');
    await s.screenshot('play-done');

    // The lock is released when the episode ends.
    await queue.waitForSelector('[data-testid=interactive-lock]', { state: 'detached', timeout: 10_000 });
    await queue.close();
  });

  it('sorts and filters a 1,000-episode run about as fast as its 125 errors, drawing only the rows in view', async () => {
    const runId = '20260101_120000';
    const s = await open({ prepare: (out) => writeSyntheticRun(out, { runId, episodeCount: 1000, workerCount: 8 }).then(() => undefined) });
    await s.page.goto(`${s.url}#/runs`);
    await s.page.waitForSelector(`tr[data-run-id="${runId}"]`);

    // Page scripts are strings so that nothing the test's compiler adds reaches the browser.
    const untilPainted = (cond: string) =>
      `new Promise((resolve) => { const check = () => (${cond} ? requestAnimationFrame(() => resolve()) : requestAnimationFrame(check)); check(); })`;

    // From the click on the run to its first episode rows, and to all 1,000 (server time included); logged only.
    const opened = (await s.page.evaluate(`(async () => {
      const t0 = performance.now();
      location.hash = '#/runs/${runId}';
      await ${untilPainted("document.querySelector('[data-testid=episode-row]')")};
      const first = performance.now() - t0;
      await ${untilPainted('document.querySelector(\'[data-testid=episode-table][data-rows="1000"]\')')};
      return { first, all: performance.now() - t0 };
    })()`)) as { first: number; all: number };

    // One step on the table until painted: its time, the table's own render time (User Timing
    // 'episode-table'), and how many episode rows it put into the page.
    interface Step {
      ms: number;
      renderMs: number;
      rowsAdded: number;
      rowsInDom: number;
    }
    const step = async (act: string, done: string): Promise<Step> =>
      (await s.page.evaluate(`(async () => {
        const table = document.querySelector('[data-testid=episode-table]');
        let rowsAdded = 0;
        const observer = new MutationObserver((records) => {
          for (const r of records) for (const n of r.addedNodes) if (n.dataset && n.dataset.testid === 'episode-row') rowsAdded++;
        });
        observer.observe(table, { childList: true, subtree: true });
        // From the start of a frame, so that where the last step left the frame does not count.
        await new Promise((resolve) => requestAnimationFrame(resolve));
        const t0 = performance.now();
        ${act};
        await ${untilPainted(done)};
        const ms = performance.now() - t0;
        observer.disconnect();
        const renderMs = performance.getEntriesByName('episode-table').filter((e) => e.startTime >= t0).reduce((a, e) => a + e.duration, 0);
        return { ms, renderMs, rowsAdded, rowsInDom: table.querySelectorAll('[data-testid=episode-row]').length };
      })()`)) as Step;
    // Each click on a metric's header reverses the order; the header's aria-sort is drawn with the rows.
    const sort = () =>
      step(
        `window.__sortedAs = document.querySelector('[data-sort-key="m:distance_to_goal"]').getAttribute('aria-sort');
         document.querySelector('[data-sort-key="m:distance_to_goal"]').click()`,
        `document.querySelector('[data-sort-key="m:distance_to_goal"]').getAttribute('aria-sort') !== window.__sortedAs`,
      );
    const filter = (ending: string, rows: number) =>
      step(
        `const select = document.querySelector('select[name=ending]');
         select.value = '${ending}';
         select.dispatchEvent(new Event('change', { bubbles: true }))`,
        `document.querySelector('[data-testid=episode-table][data-rows="${rows}"]')`,
      );

    // The same steps on all 1,000 episodes and on the 125 that ended in an error, side by side in
    // this page, so that whatever else the machine is doing weighs on both alike.
    const all: { sort: Step[]; filter: Step[] } = { sort: [], filter: [] };
    const errors: { sort: Step[]; filter: Step[] } = { sort: [], filter: [] };
    for (let i = 0; i < 7; i++) {
      errors.filter.push(await filter('ERROR', 125));
      errors.sort.push(await sort());
      all.filter.push(await filter('', 1000));
      all.sort.push(await sort());
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ms = (xs: Step[]) => median(xs.map((x) => x.ms));
    const renderMs = (xs: Step[]) => median(xs.map((x) => x.renderMs));
    const list = (xs: Step[]) => xs.map((x) => x.ms.toFixed(0)).join(', ');
    console.log(
      `1,000-episode run: first rows ${opened.first.toFixed(0)} ms and all rows ${opened.all.toFixed(0)} ms after opening (server included); ` +
        `sort median ${ms(all.sort).toFixed(0)} ms [${list(all.sort)}] against ${ms(errors.sort).toFixed(0)} ms [${list(errors.sort)}] for 125; ` +
        `filter median ${ms(all.filter).toFixed(0)} ms [${list(all.filter)}] against ${ms(errors.filter).toFixed(0)} ms [${list(errors.filter)}]; ` +
        `render median sort ${renderMs(all.sort).toFixed(1)} / ${renderMs(errors.sort).toFixed(1)} ms, filter ${renderMs(all.filter).toFixed(1)} / ${renderMs(errors.filter).toFixed(1)} ms; ` +
        `rows in the DOM ${all.sort[0]!.rowsInDom} / ${errors.sort[0]!.rowsInDom}, added per sort ${all.sort.map((x) => x.rowsAdded).join(', ')}`,
    );

    // The table draws the rows in view, not the run: as many rows for 1,000 episodes as for 125,
    // and a sort puts at most that many new rows into the page.
    const screenful = errors.sort[0]!.rowsInDom;
    expect(screenful, 'rows drawn for the 125 errors').toBeLessThan(125);
    for (const x of [...all.sort, ...all.filter]) expect(x.rowsInDom, 'rows drawn for all 1,000 episodes').toBe(screenful);
    for (const x of all.sort) expect(x.rowsAdded, 'rows a sort of 1,000 episodes adds').toBeLessThanOrEqual(screenful);
    // So sorting or filtering all 1,000 takes about as long as the same on 125, measured in the same
    // moment; a table that draws every row takes about 5× as long to sort.
    expect(ms(all.sort) / ms(errors.sort), 'sort time, 1,000 episodes against 125').toBeLessThanOrEqual(2.5);
    expect(ms(all.filter) / ms(errors.filter), 'filter time, 1,000 episodes against 125').toBeLessThanOrEqual(2.5);

    // Scrolled to its end, the table shows the last episode and still holds about a screenful of rows.
    await s.page.click('[data-sort-key=index]');
    await s.page.waitForSelector('[data-sort-key=index][aria-sort=ascending]');
    await s.page.$eval('[data-testid=episode-table] .table-scroll', (el) => el.scrollTo(0, el.scrollHeight));
    await s.page.waitForSelector('[data-testid=episode-row][data-index="999"]');
    expect(await s.page.locator('[data-testid=episode-row]').count()).toBeLessThanOrEqual(2 * screenful);
    await s.page.waitForSelector('[data-testid=worker-timeline][data-bars="1000"]');
    await s.screenshot('large-run');
  });

  it('ships at most 400 KB of gzipped JavaScript', () => {
    const assets = join(WEB_DIST_DIR, 'assets');
    const js = readdirSync(assets).filter((f) => f.endsWith('.js'));
    expect(js.length, 'web/dist has no JavaScript: run `npm run build` first').toBeGreaterThan(0);
    const gz = js.reduce((sum, f) => sum + gzipSync(readFileSync(join(assets, f)), { level: 9 }).length, 0);
    console.log(`dashboard JavaScript: ${js.length} file(s), ${(gz / 1024).toFixed(1)} KB gzipped`);
    expect(gz).toBeLessThanOrEqual(400 * 1024);
  });
});
