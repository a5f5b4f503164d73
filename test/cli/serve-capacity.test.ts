/** `evalctl serve --ram-mb/--vram-mb`: the capacity admission counts against where memory cannot be measured. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import { gql, START_EVAL, urlFrom } from '../app.helpers.js';
import { fakeNvidiaSmi, type FakeNvidiaSmi } from '../fixtures/fake-nvidia-smi.js';

const MAIN = join(DIST_DIR, 'main.js');
let child: ResultPromise | undefined;
let dir: string | undefined;
let smi: FakeNvidiaSmi | undefined;

afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await child?.catch(() => {});
  child = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  smi?.remove();
});

describe('evalctl serve --ram-mb/--vram-mb', () => {
  it('counts VRAM against --vram-mb where no GPU can be measured', async () => {
    dir = await mkdtemp(join(tmpdir(), 'serve-capacity-'));
    // An nvidia-smi that cannot reach a driver, and no lspci: nothing to measure.
    smi = fakeNvidiaSmi();
    smi.setMode('fail');
    child = execa('node', [MAIN, 'serve', '--port', '0', '--outputs', join(dir, 'outputs'), '--vram-mb', '1000', '--ram-mb', '64000'], {
      reject: false,
      forceKillAfterDelay: false,
      env: { EVAL_API_TOKEN: '', PATH: smi.path() },
    });
    const url = await urlFrom(child);
    const res = await gql(url, '{ resources { vramMeasured vramTotalMb vramFreeMb gpus { name } } }');
    expect(res.data!.resources).toEqual({ vramMeasured: false, vramTotalMb: 1000, vramFreeMb: 1000, gpus: [] });
    const tooBig = await gql(url, START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 1, marginalVramMb: 1500 } });
    expect(tooBig.errors?.[0]).toMatchObject({
      message: expect.stringContaining('1000 MB of VRAM'),
      extensions: { code: 'BAD_USER_INPUT' },
    });
    child.kill('SIGTERM');
    expect((await child).exitCode).toBe(0);
  });

  it('rejects a capacity that is not a whole number of MB, naming the flag', async () => {
    for (const [flag, value] of [
      ['--vram-mb', 'lots'],
      ['--ram-mb', '-5'],
      ['--vram-mb', '1.5'],
    ]) {
      const result = await execa('node', [MAIN, 'serve', `${flag}=${value}`], { reject: false });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(`${flag} must be a whole number of MB`);
    }
  });
});
