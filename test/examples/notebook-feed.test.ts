/**
 * examples/notebook_feed.py against a real server: the final table it prints has the shape
 * docs/graphql.md shows (mean and stderr to four decimals).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { writeSyntheticRun } from '../e2e/synthetic-run.js';

const quietLogger = { info: () => {}, warn: () => {}, error: (m: string) => process.stderr.write(`[server] ${m}\n`) };
// "  success              1.0000 ± 0.0000  (n=12)"
const FINAL_METRIC_LINE = /^ {2}\S+\s+-?\d+\.\d{4} ± \d+\.\d{4} {2}\(n=\d+\)$/;

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('examples/notebook_feed.py', { timeout: 30_000 }, () => {
  it('prints the final aggregates as its documentation shows them', async () => {
    const documented = readFileSync(join(PACKAGE_ROOT, 'docs', 'graphql.md'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('#   '))
      .map((l) => l.slice(2));
    expect(documented.length, 'the metric lines of the example in docs/graphql.md').toBeGreaterThan(0);
    for (const l of documented) expect(l).toMatch(FINAL_METRIC_LINE);

    const dir = await mkdtemp(join(tmpdir(), 'notebook-feed-'));
    const runId = await writeSyntheticRun(join(dir, 'outputs'), { runId: '20260101_120000', episodeCount: 12, workerCount: 2 });
    const app = buildApp({ outputsDir: join(dir, 'outputs'), logger: quietLogger, webDir: join(dir, 'no-web') });
    const { url } = await app.start(0);
    cleanup = async () => {
      await app.stop({ cancelRunning: true });
      await rm(dir, { recursive: true, force: true });
    };

    const py = await execa('python3', ['examples/notebook_feed.py', '--url', `${url}/graphql`, '--run', runId], {
      cwd: PACKAGE_ROOT,
      reject: false,
    });
    expect(py.exitCode, py.stderr).toBe(0);
    const lines = py.stdout.split('\n');
    const final = lines.slice(lines.indexOf('final: COMPLETED') + 1).filter(Boolean);
    expect(final.map((l) => l.trim().split(/\s+/)[0])).toEqual(['distance_to_goal', 'spl', 'steps', 'success']);
    for (const l of final) expect(l).toMatch(FINAL_METRIC_LINE);
  });
});
