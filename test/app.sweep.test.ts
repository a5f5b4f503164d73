/** examples/sweep.ts against a real server: a small grid, followed to the end, compared in a table. */
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
  it('starts graph × overrides × seeds, follows every run to its end and prints the comparison', async () => {
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
        'agent.epsilon=0,0.5',
        '--seeds',
        '0,1',
        '--episodes',
        '2',
        '--metrics',
        'success,spl',
      ],
      { cwd: PACKAGE_ROOT, reject: false },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^graph\s+overrides\s+run\s+seed\s+status\s+episodes\s+success\s+spl$/);
    const rows = lines.filter((l) => l.startsWith('gridnav_planner') && l.includes('COMPLETED'));
    expect(rows).toHaveLength(4);
    expect(rows.filter((r) => r.includes('agent.epsilon=0.5'))).toHaveLength(2);
    expect(result.stdout).toContain('across 2 seeds');

    const runs = await server.gql(`{ runs { total items { status overrides seed } } }`);
    expect(runs.data!.runs.total).toBe(4);
    expect(runs.data!.runs.items.map((r: { overrides: { agent: { epsilon: number } } }) => r.overrides.agent.epsilon).sort()).toEqual([
      0, 0, 0.5, 0.5,
    ]);
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
