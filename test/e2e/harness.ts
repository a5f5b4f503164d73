/**
 * What every browser test needs: the real backend on port 0 over a temp outputs dir, Debian's
 * Chromium driven by playwright-core, and a record of every console error the page logs.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { buildApp } from '../../src/app.js';

export const CHROMIUM = '/usr/bin/chromium';

const quietLogger = { info: () => {}, warn: () => {}, error: (m: string) => process.stderr.write(`[server] ${m}\n`) };

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) to run the browser tests`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface Session {
  /** The test's own folder: outputs/ for the backend, screenshots beside it (removed at close unless E2E_KEEP_SCREENSHOTS is set). */
  dir: string;
  outputsDir: string;
  url: string;
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors, in order. */
  consoleErrors: string[];
  /** Another tab on the same dashboard. */
  newPage(): Promise<Page>;
  screenshot(name: string, page?: Page): Promise<string>;
  close(): Promise<void>;
}

export interface SessionOptions {
  /** Runs before the backend starts (e.g. to put run dirs on disk). */
  prepare?: (outputsDir: string) => Promise<void>;
  viewport?: { width: number; height: number };
  /** A workspace overlay (graphs/, graph_nodes/) for the backend. */
  workspaceDir?: string;
}

export async function openSession(browser: Browser, opts: SessionOptions = {}): Promise<Session> {
  const dir = await mkdtemp(join(tmpdir(), 'e2e-dashboard-'));
  const outputsDir = join(dir, 'outputs');
  await opts.prepare?.(outputsDir);
  const app = buildApp({
    outputsDir,
    logger: quietLogger,
    scheduler: {
      tickIntervalMs: 200,
      cancelGraceMs: 3000,
      sharedHostIdleMs: 0,
      ...(opts.workspaceDir ? { workspaceDir: opts.workspaceDir } : {}),
    },
  });
  let url: string;
  try {
    ({ url } = await app.start(0));
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1440, height: 900 } });
  const consoleErrors: string[] = [];
  const watch = (p: Page) => {
    p.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    p.on('pageerror', (e) => consoleErrors.push(`uncaught: ${e.message}`));
  };
  const page = await context.newPage();
  watch(page);
  let closed = false;
  return {
    dir,
    outputsDir,
    url,
    context,
    page,
    consoleErrors,
    async newPage() {
      const p = await context.newPage();
      watch(p);
      return p;
    },
    async screenshot(name, p = page) {
      const file = join(dir, `${name}.png`);
      await p.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await context.close();
      } catch {
        // already gone with the browser
      }
      try {
        await app.stop({ cancelRunning: true });
      } finally {
        // Screenshots stay only when asked for (E2E_KEEP_SCREENSHOTS=1, for a person to look at); the run outputs always go.
        await rm(process.env.E2E_KEEP_SCREENSHOTS ? outputsDir : dir, { recursive: true, force: true });
      }
    },
  };
}

/** Sends one GraphQL request to the backend the way a script would. */
export async function graphql<T>(url: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(new URL('/graphql', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: Array<{ message: string }> };
  if (body.errors?.length) throw new Error(body.errors.map((e) => e.message).join('; '));
  return body.data as T;
}

/** Polls `check` until it returns a value, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * One browser for the test file and one session per test: call at the top of a test file.
 * `open` starts a session; after each test it is closed and must have logged no console error.
 */
export function sessionPerTest(): { open(opts?: SessionOptions): Promise<Session> } {
  let browser: Browser | undefined;
  let session: Session | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    const s = session;
    session = undefined;
    if (!s) return;
    await s.close();
    expect(s.consoleErrors, 'console errors on the page').toEqual([]);
  });
  return {
    async open(opts) {
      if (!browser) throw new Error('sessionPerTest: the browser is not launched yet');
      session = await openSession(browser, opts);
      return session;
    },
  };
}
