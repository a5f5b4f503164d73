/**
 * The dashboard over a real scale-out fleet: a redis-server, the head (a server with --redis
 * serving the built dashboard) and `evalctl worker` processes. The Workers page says how to
 * start a worker while there is none, lists the workers once they report, and a run on the
 * fleet shows one band per shard on its run page until it ends.
 */
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../app.helpers.js';
import { startWorker, TOKEN, type TestWorker } from '../scaleout/fleet.js';
import { startTestRedis, type TestRedis } from '../scaleout/redis-server.js';
import { expectAccessible } from './axe.js';
import { launchBrowser } from './harness.js';

let redis: TestRedis;
let head: TestServer;
let browser: Browser;
let page: Page;
const workers: TestWorker[] = [];
const consoleErrors: string[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  head = await startServer({ token: TOKEN, webDir: resolve('web/dist'), redis: { redisUrl: redis.url, redisLostMs: 5000 } });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`uncaught: ${e.message}`));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.allSettled(workers.map((w) => w.stop()));
  await head?.stop();
  await redis?.stop();
}, 60_000);

describe('fleet dashboard', { timeout: 180_000 }, () => {
  it('says how to start a worker while none has reported', async () => {
    await page.goto(`${head.url}/?token=${TOKEN}#/workers`);
    const empty = await page.waitForSelector('[data-testid=workers-empty]');
    const text = (await empty.textContent()) ?? '';
    expect(text).toContain('evalctl serve --redis');
    expect(text).toContain('evalctl worker --redis');
    expect(await page.getAttribute('nav a[href="#/workers"]', 'aria-current')).toBe('page');
    await expectAccessible(page, 'the empty Workers page');
  });

  it('lists the workers, then shows a fleet run as shard bands on its run page', async () => {
    for (const name of ['ui-w1', 'ui-w2']) workers.push(await startWorker({ redisUrl: redis.url, serverUrl: head.url, name, slots: 1 }));
    // The page polls by itself: no reload.
    await page.waitForSelector('[data-testid=workers-table] tr[data-worker=ui-w2]', { timeout: 30_000 });
    await page.waitForSelector('[data-testid=workers-table] tr[data-worker=ui-w1]', { timeout: 30_000 });
    const row = (await page.textContent('tr[data-worker=ui-w1]')) ?? '';
    expect(row).toMatch(/0\/1/);
    expect(row).toMatch(/\d+ s ago/);
    await expectAccessible(page, 'the Workers page with two workers');

    // 4 shards of 3 on 2 one-slot workers: two wait while two run, and each episode takes a while.
    const run = await head.app.scheduler.submit({
      graphName: 'gridnav_planner',
      episodeCount: 12,
      seed: 3,
      shardSize: 3,
      workerCount: 1,
      overrides: { env: { step_latency_ms: 40 } },
    });
    await page.goto(`${head.url}/#/runs/${run.runId}`);
    await page.waitForSelector('[data-testid=shard-bands] .shard-band[data-shard="3"]', { timeout: 30_000 });
    expect(await page.locator('[data-testid=shard-bands] .shard-band').count()).toBe(4);
    const first = (await page.textContent('.shard-band[data-shard="0"]')) ?? '';
    expect(first).toMatch(/#0\s*0–2/);
    expect(first).toMatch(/\/3/);
    const legend = (await page.textContent('[data-testid=shard-bands] .shard-legend')) ?? '';
    for (const s of ['waiting', 'running', 'completed', 'failed', 'cancelled']) expect(legend).toContain(s);
    // A shard goes to a worker: its band names it.
    await page.waitForSelector('.shard-band[data-state=RUNNING]', { timeout: 30_000 });
    expect((await page.textContent('.shard-band[data-state=RUNNING]')) ?? '').toMatch(/ui-w[12]/);
    await expectAccessible(page, 'a run page with shard bands');

    // While it runs, the Workers page shows a busy slot linking to the run.
    await page.goto(`${head.url}/#/workers`);
    await page.waitForSelector(`[data-testid=workers-table] a[href="#/runs/${run.runId}"]`, { timeout: 30_000 });

    await page.goto(`${head.url}/#/runs/${run.runId}`);
    await page.waitForSelector('.run-page[data-status=COMPLETED]', { timeout: 120_000 });
    // An ended run is no longer on the fleet: no bands.
    expect(await page.locator('[data-testid=shard-bands]').count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });
});
