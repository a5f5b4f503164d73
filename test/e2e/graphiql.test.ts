/**
 * GraphiQL at /graphql in a real browser with the network cut: every request that leaves
 * loopback is aborted, and GraphiQL still loads, runs a query and shows its result.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/http/access.js';
import { launchBrowser, openSession, type Session } from './harness.js';

let browser: Browser;
let session: Session | undefined;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await session?.close();
  await browser?.close();
});

describe('GraphiQL offline', () => {
  it('loads from the server alone and runs a query', async () => {
    session = await openSession(browser);
    const { page, context, url } = session;
    const blocked: string[] = [];
    await context.route('**/*', (route) => {
      const target = new URL(route.request().url());
      if ((target.protocol === 'http:' || target.protocol === 'https:' || target.protocol === 'ws:') && !isLoopbackHost(target.hostname)) {
        blocked.push(target.href);
        return route.abort('internetdisconnected');
      }
      return route.continue();
    });
    const response = await page.goto(url + '/graphql', { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    const run = page.locator('.graphiql-execute-button');
    await run.waitFor({ state: 'visible', timeout: 30_000 });
    // The schema arrives by introspection over the same server: the docs explorer can list it.
    const answered = page.waitForResponse(
      (r) =>
        r.url().endsWith('/graphql') && r.request().method() === 'POST' && !(r.request().postData() ?? '').includes('IntrospectionQuery'),
    );
    await run.click();
    // The editor renders only the lines in view, so the whole answer is read from the response.
    const body = await (await answered).json();
    expect(body.errors).toBeUndefined();
    expect(body.data.queue).toBeDefined();
    const result = page.locator('.result-window');
    await expect.poll(async () => (await result.textContent()) ?? '', { timeout: 30_000 }).toContain('gridnav_planner');
    expect(blocked).toEqual([]);
    expect(session.consoleErrors.filter((e) => !/Download the React DevTools/.test(e))).toEqual([]);
  });
});
