/**
 * `evalctl export` as a user runs it from a shell: piped into a reader that stops early, written
 * to a file in a folder that does not exist, and the tar.gz asked for by its extension.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';

const CLI = join(DIST_DIR, 'main.js');
const RUN_ID = '20260101_120000';

let tmp: string;
let outputs: string;

/** A finished run of one episode whose asset (4 MiB of random bytes) makes a tar.gz no pipe buffer holds. */
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'cli-export-'));
  outputs = join(tmp, 'outputs');
  const runDir = join(outputs, 'eval_runs', RUN_ID);
  const record = {
    index: 0,
    episodeId: 'mini/val/0',
    status: 'COMPLETED',
    steps: 1,
    metrics: { success: 1 },
    seed: 0,
    workerId: 0,
    durationMs: 1,
    startedAt: '2026-01-01T12:00:00.000Z',
    finishedAt: '2026-01-01T12:00:01.000Z',
    stepBudget: 5,
    assets: ['big.bin'],
  };
  const ep = join(runDir, 'episodes', 'ep0000');
  await mkdir(join(ep, 'assets'), { recursive: true });
  await writeFile(join(ep, 'episode.json'), JSON.stringify(record));
  await writeFile(join(ep, 'assets', 'big.bin'), randomBytes(4 * 1024 * 1024));
  await writeFile(join(runDir, 'spec.json'), '{}');
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const evalctl = (args: string[]) => execa(process.execPath, [CLI, 'export', RUN_ID, '--outputs', outputs, ...args], { reject: false });
const bytesOf = (args: string[]) =>
  execa(process.execPath, [CLI, 'export', RUN_ID, '--outputs', outputs, ...args], { encoding: 'buffer' }).then((r) =>
    Buffer.from(r.stdout),
  );

describe('evalctl export', { timeout: 30_000 }, () => {
  it('ends quietly with status 0 when the reader closes the pipe early (| head)', async () => {
    const cmd = `set -o pipefail; "${process.execPath}" "${CLI}" export ${RUN_ID} --outputs "${outputs}" --format tar | head -c 10 | wc -c`;
    const r = await execa('bash', ['-c', cmd], { reject: false });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('10');
    expect(r.exitCode).toBe(0);
  });

  it('takes --format tar.gz as tar', async () => {
    const tarGz = await bytesOf(['--format', 'tar.gz']);
    expect([...tarGz.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    expect(tarGz.equals(await bytesOf(['--format', 'tar']))).toBe(true);
  });

  it('names the -o path the user gave when its folder does not exist, and leaves nothing behind', async () => {
    const target = join(tmp, 'missing', 'x.csv');
    const r = await evalctl(['-o', target]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(`evalctl: -o ${target}: its folder ${join(tmp, 'missing')} does not exist`);
    expect((await readdir(tmp)).sort()).toEqual(['outputs']);
  });

  it('refuses a folder that is not a run (../../etc, the outputs folder) with exit 2 and no CSV; a run directory by path exports', async () => {
    const runDir = join(outputs, 'eval_runs', RUN_ID);
    const exportPath = (path: string, cwd = runDir) => execa(process.execPath, [CLI, 'export', path], { reject: false, cwd });
    for (const path of ['../../etc', outputs, join(outputs, 'eval_runs')]) {
      const r = await exportPath(path, tmp);
      expect(r.exitCode, path).toBe(2);
      expect(r.stdout, path).toBe('');
      expect(r.stderr, path).toMatch(/^evalctl: \S+ is not a run directory \(it holds no spec\.json or summary\.json\): give a run id/);
    }
    const missing = await exportPath(join(tmp, 'nowhere'));
    expect([missing.exitCode, missing.stderr]).toEqual([2, `evalctl: run directory ${join(tmp, 'nowhere')} not found`]);
    const ok = await exportPath('.');
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^index,episodeId,/);
    expect(ok.stdout).toBe((await evalctl([])).stdout);
  });
});
