/** The eval process `evalctl run` starts while it checks the run: handed a run it plays it; discarded or gone, nothing is left. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EvalSpare } from '../../src/cli/eval-spare.js';
import { readSummary, FILES } from '../../src/store/run-dir.js';
import { isAlive, makeRun } from '../eval-process/run-helpers.js';

let tmp: string;
const spares: EvalSpare[] = [];

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'eval-spare-'));
});
afterEach(async () => {
  for (const s of spares.splice(0)) s.discard();
  vi.unstubAllEnvs();
  await rm(tmp, { recursive: true, force: true });
});

const spare = (): EvalSpare => {
  const s = new EvalSpare();
  spares.push(s);
  return s;
};

describe('EvalSpare', () => {
  it('plays the run it is handed, its output in the run logs from its first line, with the variables set after it started', async () => {
    const s = spare();
    const { dir } = await makeRun(tmp, { graphName: 'gridnav_planner', episodeCount: 2, workerCount: 2, dataset: 'mini' });
    const logs = { stdout: join(dir, FILES.stdout), stderr: join(dir, FILES.stderr) };
    // Set once the spare runs (as `evalctl run` sets the llm cache folder): go passes it on.
    vi.stubEnv('EVAL_LLM_CACHE_DIR', join(tmp, 'cache-set-later'));
    const child = await s.go(dir, logs);
    expect(child).not.toBeNull();
    expect(await child!.exited).toEqual({ exitCode: 0, signal: null });
    const summary = await readSummary(dir);
    expect(summary).toMatchObject({ status: 'COMPLETED', episodesDone: 2 });
    const out = await readFile(logs.stdout, 'utf8');
    expect(out).toMatch(/spare for run dir \(named by go\)/);
    expect(out).toContain(`run dir ${dir}`);
    expect(out).toMatch(/variables set by go: .*EVAL_LLM_CACHE_DIR/);
    await expect(s.go(dir, logs)).rejects.toThrow('already handed a run');
  }, 60_000);

  it('discarded, it exits and writes nothing; gone before go, go answers null', async () => {
    const a = spare();
    const pid = a.pid!;
    expect(isAlive(pid)).toBe(true);
    a.discard();
    a.discard();
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 10_000, interval: 50 });

    const b = spare();
    process.kill(b.pid!, 'SIGKILL');
    const { dir } = await makeRun(tmp, { graphName: 'gridnav_planner', episodeCount: 1 });
    expect(await b.go(dir, { stdout: join(dir, FILES.stdout), stderr: join(dir, FILES.stderr) })).toBeNull();
  }, 30_000);
});
