/**
 * `evalctl retry` on a local run directory: a signal cancels the attempt and the exit code says
 * which signal it was (docs/retry.md).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import type { AttemptsFile } from '../../src/store/attempts.js';
import type { RunSummary } from '../../src/store/types.js';
import { crashingRun } from '../support/crashing-run.js';

const CLI = join(DIST_DIR, 'main.js');
const epDir = (index: number) => `ep${String(index).padStart(4, '0')}`;

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('evalctl retry (local)', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'evalctl-retry-'));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s cancels the attempt and the CLI exits %i',
    async (signal, exitCode) => {
      const outputs = join(tmp, 'out');
      // Slow enough that no episode ends before the signal: each step sleeps 100 ms.
      const args = ['--episodes', '6', '--set', 'env.step_latency_ms=100', '--outputs', outputs, '--json'];
      const first = execa(process.execPath, [CLI, 'run', 'gridnav_planner', ...args], { reject: false });
      const runs = join(outputs, 'eval_runs');
      let runDir = '';
      await until('the run to play its first episode', async () => {
        const ids = existsSync(runs) ? await readdir(runs) : [];
        runDir = ids[0] ? join(runs, ids[0]) : '';
        return runDir !== '' && existsSync(join(runDir, 'episodes', epDir(0), 'log.jsonl'));
      });
      first.kill('SIGINT');
      expect((await first).exitCode).toBe(130);

      const retry = execa(process.execPath, [CLI, 'retry', runDir, '--json'], { reject: false });
      await until('attempt 2 to play an episode', async () => {
        if (!existsSync(join(runDir, 'attempts.json'))) return false;
        const file = JSON.parse(await readFile(join(runDir, 'attempts.json'), 'utf8')) as AttemptsFile;
        const indices = file.attempts.at(-1)?.indices ?? [];
        return indices.some((i) => existsSync(join(runDir, 'episodes', epDir(i), 'log.jsonl')));
      });
      retry.kill(signal);
      const r = await retry;
      expect(r.exitCode).toBe(exitCode);
      const summary = JSON.parse(r.stdout) as RunSummary;
      expect(summary.status).toBe('CANCELLED');
      expect(summary.statusCounts.COMPLETED ?? 0).toBeLessThan(6);
    },
    120_000,
  );

  it("plays a server's run with hosts of its own, not the server's shared hosts its shared_urls.json names", async () => {
    const outputs = join(tmp, 'out');
    const s1 = await crashingRun(outputs, 2);
    expect(s1.statusCounts).toEqual({ CRASHED: 2 });
    const runDir = join(outputs, 'eval_runs', s1.runId);
    // As a server leaves it: its shared planner host, which answers only the server's eval processes (here: gone).
    await writeFile(join(runDir, 'shared_urls.json'), JSON.stringify({ planner: 'http://127.0.0.1:9' }));
    const r = await execa(process.execPath, [CLI, 'retry', runDir, '--json'], { reject: false });
    const s2 = JSON.parse(r.stdout) as RunSummary;
    expect(s2.error).toBeNull();
    expect(s2.status).toBe('COMPLETED');
    expect(s2.statusCounts).toEqual({ CRASHED: 2 });
    expect(r.exitCode).toBe(0);
  }, 120_000);
});
