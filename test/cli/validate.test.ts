import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
// The compiled CLI, as users run it (`npm test` builds first).
const MAIN = resolve(import.meta.dirname, '../../dist/main.js');

/** Runs `evalctl <args>` the way a user would, with a workspace overlay. */
async function evalctl(args: string[], workspace: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], {
      env: { ...process.env, ACTIVE_WORKSPACE_DIR: workspace },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('evalctl validate and graphs', () => {
  let ws: string;
  beforeEach(() => {
    ws = mkdtempSync(join(tmpdir(), 'evalctl-validate-'));
    const nodeset = join(ws, 'graph_nodes', 'toy_env');
    mkdirSync(nodeset, { recursive: true });
    mkdirSync(join(ws, 'graphs'));
    writeFileSync(
      join(nodeset, 'manifest.json'),
      JSON.stringify({
        name: 'toy_env',
        parallelism: 'replicated',
        module: 'index.js',
        functions: [
          { name: 'step', inputs: [{ name: 'action', optional: true }], outputs: [{ name: 'observation' }, { name: 'metrics' }] },
        ],
      }),
    );
    writeFileSync(join(nodeset, 'index.js'), 'export default { functions: { step: () => ({}) } };\n');
  });
  afterEach(() => rmSync(ws, { recursive: true, force: true }));

  it('prints ok with the counts for a valid graph, and every problem of a bad one with exit 2', async () => {
    const good = join(ws, 'good.json');
    writeFileSync(
      good,
      JSON.stringify({
        name: 'toy',
        nodes: [
          { id: 'env', type: 'toy_env__step' },
          { id: 'out', type: 'graphOut' },
        ],
        edges: [{ from: 'env.metrics', to: 'out.metrics' }],
      }),
    );
    const ok = await evalctl(['validate', good], ws);
    expect(ok).toMatchObject({ code: 0, stdout: 'ok: toy (2 nodes, 1 edges)\n' });

    const bad = join(ws, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({
        name: 'toy_bad',
        nodes: [{ id: 'env', type: 'toy_env__stp' }],
        edges: [{ from: 'env.observation', to: 'env.action' }],
      }),
    );
    const r = await evalctl(['validate', bad], ws);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe('invalid: toy_bad (3 problems)');
    expect(lines).toContain('cycle without a loop edge: env -> env (mark one of its edges "loop": true)');
    expect(lines).toContain('node "env": unknown type "toy_env__stp" (did you mean "toy_env__step"?)');
    expect(lines).toContain(`no "graphOut" node: add one to collect the episode's metrics`);
  });

  it('refuses a missing file and bad JSON with one line and a non-zero exit', async () => {
    const missing = await evalctl(['validate', join(ws, 'nope.json')], ws);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read graph file ".*nope\.json"/);
    writeFileSync(join(ws, 'broken.json'), '{"name":');
    const broken = await evalctl(['validate', join(ws, 'broken.json')], ws);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/broken\.json is not valid JSON/);
  });

  it('lists workspace graphs with their source and description', async () => {
    writeFileSync(join(ws, 'graphs', 'toy.json'), JSON.stringify({ name: 'toy', description: 'a toy', nodes: [], edges: [] }));
    const r = await evalctl(['graphs', '--json'], ws);
    expect(r.code).toBe(0);
    const list = JSON.parse(r.stdout) as Array<{ name: string; source: string; description?: string }>;
    expect(list.find((g) => g.name === 'toy')).toMatchObject({ source: 'workspace', description: 'a toy' });
    const table = await evalctl(['graphs'], ws);
    expect(table.stdout).toMatch(/^NAME\s+SOURCE\s+DESCRIPTION$/m);
    expect(table.stdout).toMatch(/^toy\s+workspace\s+a toy$/m);
  });
});
