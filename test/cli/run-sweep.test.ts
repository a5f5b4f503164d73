/**
 * `evalctl run --config` with a `sweep` table: queued on a server as one sweep (seed axis → the
 * sweep's seeds, overrides axes → its grid), followed to the end and printed as the sweep table;
 * refused without --server, and for an axis a sweep cannot vary.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepRequestOf } from '../../src/cli/run-sweep.js';
import { DIST_DIR } from '../../src/paths.js';
import { startServer, type TestServer } from '../app.helpers.js';

const CLI = join(DIST_DIR, 'main.js');
let server: TestServer;
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'run-sweep-'));
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
  await rm(tmp, { recursive: true, force: true });
});

const SWEEP_FILE = `graphName = "gridnav_planner"
episodeCount = 2
dataset = "mini"

[sweep]
seed = [1, 2]
"overrides.agent.epsilon" = [0, 0.5]
`;

describe('evalctl run --config with a sweep', { timeout: 90_000 }, () => {
  it('queues the grid × seeds as one sweep on the server and prints its table', async () => {
    const file = join(tmp, 'sweep.toml');
    await writeFile(file, SWEEP_FILE);
    const r = await execa(process.execPath, [CLI, 'run', '--config', file, '--server', server.url, '--json'], {
      reject: false,
      env: { ACTIVE_WORKSPACE_DIR: '' },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const sweep = JSON.parse(r.stdout) as {
      id: string;
      status: string;
      configs: Array<{ label: string; runs: Array<{ id: string; status: string }> }>;
    };
    expect(sweep.status).toBe('COMPLETED');
    expect(sweep.configs.map((c) => c.label)).toEqual(['agent.epsilon=0', 'agent.epsilon=0.5']);
    expect(sweep.configs.map((c) => c.runs.length)).toEqual([2, 2]);
    const runs = await server.gql(`query($id: ID!) { sweep(id: $id) { seeds configs { runs { seed overrides } } } }`, { id: sweep.id });
    expect(runs.data!.sweep.seeds).toEqual([1, 2]);
    expect(runs.data!.sweep.configs[1].runs.map((x: { seed: number }) => x.seed)).toEqual([1, 2]);
    expect(runs.data!.sweep.configs[1].runs[0].overrides).toEqual({ agent: { epsilon: 0.5 } });

    const text = await execa(process.execPath, [CLI, 'run', '--config', file, '--server', server.url], {
      reject: false,
      env: { ACTIVE_WORKSPACE_DIR: '' },
    });
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^sweep sweep_\S+ COMPLETED: gridnav_planner, 2 configs × 2 seeds/);
    expect(text.stdout).toMatch(/agent\.epsilon=0\.5\s+COMPLETED/);
    expect(text.stdout).toContain('(baseline)');
  });

  it('without --server, the sweep is refused at its line, and nothing runs', async () => {
    const file = join(tmp, 'local.toml');
    await writeFile(file, SWEEP_FILE);
    const r = await execa(process.execPath, [CLI, 'run', '--config', file, '--outputs', join(tmp, 'out')], { reject: false });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('local.toml line 5: this run file holds a sweep grid, which a server queues and compares: add --server URL');
  });

  it('refuses an axis a sweep cannot vary, and a sweep of seeds alone', () => {
    expect(() => sweepRequestOf({ episodeCount: [2, 4], 'overrides.agent.epsilon': [0] }, 'x.toml', 3)).toThrow(
      /x\.toml line 3: "sweep\.episodeCount": a sweep varies "seed" or a config value "overrides\.<node>\.<key>"/,
    );
    expect(() => sweepRequestOf({ seed: [1, 2] }, 'x.toml', 3)).toThrow(/a sweep needs at least one config axis/);
    expect(() => sweepRequestOf({ seed: [1.5], 'overrides.a.b': [1] }, 'x.toml', 3)).toThrow(/"sweep\.seed" must be a list of integers/);
    expect(sweepRequestOf({ seed: [3], 'overrides.agent.epsilon': [0, 1] }, 'x.toml', 3)).toEqual({
      grid: { 'agent.epsilon': [0, 1] },
      seeds: [3],
    });
  });
});
