/**
 * A process that holds sandboxes dies by SIGKILL: what ran in its sandboxes dies with it
 * (bubblewrap's --die-with-parent), and the next pool to start removes its folders.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../../src/paths.js';
import { SandboxPool } from '../../../src/nodesets/sandbox/sandbox-pool.js';
import { waitFor } from '../../eval-process/run-helpers.js';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'sandbox-pool-'));
  await chmod(tmp, 0o711);
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

// Opens a sandbox, starts a long sleep in it, prints the sandbox's pids, and waits to be killed.
const HOLDER = `
const { default: sandbox, sandboxPool } = await import(${JSON.stringify(join(DIST_DIR, 'nodesets/sandbox/handlers.js'))});
const ctx = { episodeKey: 'held:0', nodeId: 'tools', step: 0, episodeIndex: 0, runSeed: 0, seed: 0 };
const call = { id: 'a', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'sleep 987654' }) } };
sandbox.functions.tools({ inputs: { tool_calls: [call] }, config: { timeout_ms: 600000 }, ctx });
const dir = await new Promise((r) => { const t = setInterval(() => { const sb = sandboxPool.get('held:0'); if (sb && sb.groups.size > 0) { clearInterval(t); r(sb.dir); } }, 10); });
console.log(JSON.stringify({ dir, groups: [...sandboxPool.get('held:0').groups] }));
setInterval(() => {}, 1000);
`;

/** Running processes (zombies aside) of the held sandbox's sleep. */
const sleeping = (): string[] =>
  readdirSync('/proc').filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z' && readFileSync(`/proc/${pid}/cmdline`, 'utf8') === 'sleep\u0000987654\u0000';
    } catch {
      return false;
    }
  });

describe('sandbox pool', { timeout: 30_000 }, () => {
  it('leaves no process behind a SIGKILLed holder, and the next pool reaps its folder', async () => {
    const base = join(tmp, 'sandboxes');
    const holder = execa(process.execPath, ['--input-type=module', '-e', HOLDER], { env: { EVAL_SANDBOX_DIR: base }, reject: false });
    const line = await new Promise<string>((resolve) => holder.stdout!.once('data', (b: Buffer) => resolve(b.toString())));
    const { dir } = JSON.parse(line) as { dir: string };
    expect(existsSync(dir)).toBe(true);
    expect(await waitFor(() => sleeping().length === 1, 5000)).toBe(true);
    holder.kill('SIGKILL');
    await holder;
    expect(await waitFor(() => sleeping().length === 0, 5000)).toBe(true);
    expect(existsSync(dir)).toBe(true);

    const next = new SandboxPool(base);
    const mine = next.root.slice(base.length + 1);
    expect(readdirSync(base)).toEqual([mine]);
    expect(existsSync(dir)).toBe(false);
    next.closeSync();
    expect(readdirSync(base)).toEqual([]);
  });
});
