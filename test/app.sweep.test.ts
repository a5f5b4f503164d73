/** examples/sweep.ts against a real server: a small grid queued with startSweep, followed to the end, compared in one table. */
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/paths.js';
import { startServer, type TestServer } from './app.helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('examples/sweep.ts', () => {
  it('queues the grid × seeds with startSweep, follows every run to its end and prints one table with intervals and paired differences', async () => {
    server = await startServer();
    const result = await execa(
      'node',
      [
        '--import',
        'tsx',
        'examples/sweep.ts',
        '--url',
        `${server.url}/graphql`,
        '--graph',
        'gridnav_planner',
        '--grid',
        'agent.epsilon=0.1,0.3,0.5',
        '--seeds',
        '0,1',
        '--episodes',
        '4',
        '--step-budget',
        '60',
        '--metrics',
        'success,spl',
      ],
      { cwd: PACKAGE_ROOT, reject: false },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^sweep sweep_\d{8}_\d{6}\S* of gridnav_planner \(COMPLETED\)/);
    expect(lines[1]).toMatch(/^config\s+runs\s+status\s+success\s+Δ success\s+spl\s+Δ spl$/);
    const rows = lines.filter((l) => l.startsWith('agent.epsilon='));
    expect(rows).toHaveLength(3);
    expect(rows[0]).toContain('(baseline)');
    for (const row of rows) expect(row).toMatch(/COMPLETED\s+\d\.\d{3} \[-?\d\.\d{3}, \d\.\d{3}\]/);
    expect(rows[1]).toMatch(/[+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]/);

    const runs = await server.gql(`{ runs { total items { status overrides seed } } }`);
    expect(runs.data!.runs.total).toBe(6);
    expect(runs.data!.runs.items.map((r: { overrides: { agent: { epsilon: number } } }) => r.overrides.agent.epsilon).sort()).toEqual([
      0.1, 0.1, 0.3, 0.3, 0.5, 0.5,
    ]);
    expect((await server.gql(`{ sweeps { runCount status } }`)).data!.sweeps).toEqual([{ runCount: 6, status: 'COMPLETED' }]);
  });

  it('says what is wrong with a bad grid axis', async () => {
    const result = await execa('node', ['--import', 'tsx', 'examples/sweep.ts', '--graph', 'g', '--grid', 'epsilon'], {
      cwd: PACKAGE_ROOT,
      reject: false,
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('expected node.key=v1,v2');
  });
});
