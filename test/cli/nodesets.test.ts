import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';

const MAIN = join(DIST_DIR, 'main.js');
const EXAMPLE_DIR = join(import.meta.dirname, '..', '..', 'examples', 'python-env');

describe('evalctl nodesets', () => {
  let ws: string;
  beforeAll(async () => {
    ws = await mkdtemp(join(tmpdir(), 'cli-nodesets-'));
    await cp(EXAMPLE_DIR, join(ws, 'graph_nodes', 'env_corridor'), { recursive: true });
  });
  afterAll(async () => {
    await rm(ws, { recursive: true, force: true });
  });

  const evalctl = (...args: string[]) =>
    execa(process.execPath, [MAIN, 'nodesets', ...args], { env: { ACTIVE_WORKSPACE_DIR: ws }, reject: false });

  it('--json lists each nodeset with parallelism, source and functions with their ports', async () => {
    const r = await evalctl('--json');
    expect(r.exitCode).toBe(0);
    const list = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    const corridor = list.find((n) => n.name === 'env_corridor');
    expect(corridor).toMatchObject({
      source: 'workspace',
      parallelism: 'replicated',
      host: { command: ['python3', 'host.py'] },
      functions: [
        {
          name: 'step',
          type: 'env_corridor__step',
          inputs: [{ name: 'action', optional: true }],
          outputs: [{ name: 'observation' }, { name: 'metrics' }, { name: 'done' }],
        },
        { name: 'greedy', type: 'env_corridor__greedy', inputs: [{ name: 'observation' }], outputs: [{ name: 'action' }] },
      ],
    });
  });

  it('prints a table with one line per function', async () => {
    const r = await evalctl();
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^NAME\s+PARALLELISM\s+SOURCE\s+FUNCTIONS$/m);
    expect(r.stdout).toMatch(/^env_corridor\s+replicated\s+workspace\s+step\(action\?\) → observation, metrics, done$/m);
    expect(r.stdout).toMatch(/^\s+greedy\(observation\) → action$/m);
  });

  it('refuses an unknown option with a one-line error and exit code 2', async () => {
    const r = await evalctl('--colour');
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim()).toBe('evalctl: unknown option --colour; usage: evalctl nodesets [--json]');
  });
});
