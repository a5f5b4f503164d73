/** `evalctl datasets` as a user types it: the built-ins plus a workspace overlay with a good and a bad dataset. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';

const MAIN = join(DIST_DIR, 'main.js');
let ws: string;

beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), 'cli-datasets-'));
  await mkdir(join(ws, 'datasets', 'mine'), { recursive: true });
  await writeFile(join(ws, 'datasets', 'mine', 'dataset.json'), JSON.stringify({ description: 'My own questions' }));
  await writeFile(
    join(ws, 'datasets', 'mine', 'test.csv'),
    'id,input,target,cluster\nm1,"What is 1+1?",2,easy\nm2,"Name a colour, any colour.","[""red"",""blue""]",open\n',
  );
  await mkdir(join(ws, 'datasets', 'bad'), { recursive: true });
  await writeFile(join(ws, 'datasets', 'bad', 'dev.jsonl'), '{"input":"ok"}\n{"input": "x", "choices": "A"}\n');
});
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

const evalctl = (...args: string[]) =>
  execa(process.execPath, [MAIN, 'datasets', ...args], { env: { ACTIVE_WORKSPACE_DIR: ws }, reject: false });

describe('evalctl datasets', () => {
  it('lists every dataset with its splits and sample counts, labels, and the error of one that cannot be read', async () => {
    const r = await evalctl();
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^NAME\s+SOURCE\s+SPLITS\s+LABELS\s+DESCRIPTION$/m);
    expect(r.stdout).toMatch(/^arith\s+builtin\s+dev:20 test:80\s+-\s+Arithmetic word problems/m);
    expect(r.stdout).toMatch(/^sentiment\s+builtin\s+dev:12 test:48\s+positive\/negative\/neutral\s/m);
    expect(r.stdout).toMatch(/^mine\s+workspace\s+test:2\s+-\s+My own questions$/m);
    expect(r.stdout).toContain(`ERROR: ${join(ws, 'datasets', 'bad', 'dev.jsonl')}:2: field "choices": must be a list of 2 to 26 strings`);
  });

  it('--json gives each dataset with splits, clusters and labels', async () => {
    const r = await evalctl('--json');
    expect(r.exitCode).toBe(0);
    const list = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(list.map((d) => d.name)).toEqual(['arith', 'bad', 'mcq', 'mine', 'sentiment', 'shell_tasks']);
    expect(list.find((d) => d.name === 'mine')).toEqual({
      name: 'mine',
      source: 'workspace',
      dir: join(ws, 'datasets', 'mine'),
      description: 'My own questions',
      defaultSplit: 'test',
      labels: null,
      splits: [{ name: 'test', sampleCount: 2, clusters: ['easy', 'open'] }],
      error: null,
    });
    expect(list.find((d) => d.name === 'bad')?.error).toMatch(/dev\.jsonl:2: field "choices"/);
  });

  it('one dataset: its splits and a preview of the first samples of a split', async () => {
    const r = await evalctl('mcq', '--split', 'dev', '--preview', '1');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^mcq \(builtin, .*datasets\/mcq\)$/m);
    expect(r.stdout).toMatch(/^test \(default\)\s+48\s+alphabet, capitals, fractions, prime, units, weekdays$/m);
    expect(r.stdout).toMatch(/^dev\s+12\s/m);
    expect(r.stdout).toContain('first 1 of dev:\n  0  q024: Which of these numbers is prime?\n       choices: A. ');
    expect(r.stdout).toMatch(/^ {7}target: "[A-D]"$/m);
    const json = JSON.parse((await evalctl('mine', '--json')).stdout) as { preview: { split: string; samples: unknown[] } };
    expect(json.preview).toEqual({
      split: 'test',
      samples: [
        { id: 'm1', input: 'What is 1+1?', target: '2', metadata: { cluster: 'easy' } },
        { id: 'm2', input: 'Name a colour, any colour.', target: ['red', 'blue'], metadata: { cluster: 'open' } },
      ],
    });
  });

  it('a bad dataset, an unknown dataset or split, a bad flag: one line on stderr and exit 2', async () => {
    const cases: Array<[string[], string]> = [
      [['bad'], `evalctl: ${join(ws, 'datasets', 'bad', 'dev.jsonl')}:2: field "choices": must be a list of 2 to 26 strings, got "A"`],
      [['nope'], 'evalctl: dataset "nope" not found (known: arith, bad, mcq, mine, sentiment, shell_tasks)'],
      [['arith', '--split', 'train'], 'evalctl: dataset arith has no split "train"; splits: dev, test'],
      [['arith', '--preview', 'x'], 'evalctl: --preview must be an integer ≥ 0, got "x"'],
    ];
    for (const [args, message] of cases) {
      const r = await evalctl(...args);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr.trim()).toBe(message);
    }
  });
});
