/** `evalctl gate` over run directories written by hand: exit codes, the Markdown table and the JUnit file a CI job reads. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrng } from '../../src/core/prng.js';
import type { EpisodeRecord } from '../../src/store/types.js';
import { scoredRecord, writeScoredRun } from '../support/scored-run.js';

const MAIN = resolve(import.meta.dirname, '../../dist/main.js');
let dir: string;
let outputs: string;
const ids: Record<string, string> = {};

function records(n: number, rate: number, seed: number): EpisodeRecord[] {
  const rng = createPrng(seed);
  return Array.from({ length: n }, (_, i) => scoredRecord(i, { success: rng.next() < rate ? 1 : 0 }));
}

async function writeRun(second: number, episodes: EpisodeRecord[]): Promise<string> {
  const { runId } = await writeScoredRun(outputs, new Date(2026, 0, 1, 0, 0, second), episodes, (s) => {
    s.metricRanges = { success: { min: 0, max: 1, goal: 'max', primary: true } };
  });
  return runId;
}

const gate = (...args: string[]) => execa('node', [MAIN, 'gate', '--outputs', outputs, ...args], { reject: false });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-gate-'));
  outputs = join(dir, 'outputs');
  ids.base = await writeRun(0, records(400, 0.4, 1));
  ids.better = await writeRun(1, records(400, 0.7, 2));
  ids.worse = await writeRun(2, records(400, 0.1, 3));
  ids.shortBase = await writeRun(3, records(30, 0.5, 4));
  ids.shortCand = await writeRun(4, records(30, 0.55, 5));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('evalctl gate', () => {
  it('exits 0 on a pass, 1 on a fail, 2 when inconclusive', async () => {
    const pass = await gate('--baseline', ids.base!, '--candidate', ids.better!);
    expect(pass.exitCode, pass.stderr).toBe(0);
    expect(pass.stdout).toMatch(/^gate: PASS/);
    expect(pass.stdout).toMatch(/success ↑\s+success > 0\s+400/);
    const fail = await gate(
      '--baseline',
      ids.base!,
      '--candidate',
      join(outputs, 'eval_runs', ids.worse!),
      '--require',
      'success >= -0.02',
    );
    expect(fail.exitCode, fail.stderr).toBe(1);
    expect(fail.stdout).toMatch(/^gate: FAIL/);
    const unsure = await gate('--baseline', ids.shortBase!, '--candidate', ids.shortCand!);
    expect(unsure.exitCode, unsure.stderr).toBe(2);
    expect(unsure.stdout).toMatch(/straddles the bound after 30 pairs/);
  });

  it('exits 3 for bad input: a requirement it cannot read, an unknown run, a bad config key', async () => {
    const badReq = await gate('--baseline', ids.base!, '--candidate', ids.better!, '--require', 'success => 0');
    expect(badReq.exitCode).toBe(3);
    expect(badReq.stderr).toMatch(/requirement "success => 0": not understood/);
    const missing = await gate('--baseline', ids.base!, '--candidate', '20990101_000000');
    expect(missing.exitCode).toBe(3);
    expect(missing.stderr).toMatch(/not found/);
    const config = join(dir, 'bad.toml');
    await writeFile(config, 'alpah = 0.05\n');
    const badConfig = await gate('--baseline', ids.base!, '--candidate', ids.better!, '--config', config);
    expect(badConfig.exitCode).toBe(3);
    expect(badConfig.stderr).toMatch(/unknown key\(s\) alpah/);
  });

  it('reads its requirements from a config, writes a Markdown table and a JUnit file a JUnit reader accepts', async () => {
    const config = join(dir, 'gate.toml');
    await writeFile(config, 'alpha = 0.01\nrequire = ["success >= -0.02"]\n');
    const junit = join(dir, 'gate.xml');
    const r = await gate('--baseline', ids.base!, '--candidate', ids.worse!, '--config', config, '--format', 'markdown', '--junit', junit);
    expect(r.exitCode, r.stderr).toBe(1);
    const lines = r.stdout.split('\n');
    const table = lines.filter((l) => l.startsWith('|'));
    expect(table.length).toBe(3);
    expect(table[1]).toMatch(/^\|( -{3,}:? \|)+$/);
    const cells = (l: string) => l.split(/(?<!\\)\|/).length;
    expect(new Set(table.map(cells)).size).toBe(1);
    expect(table[2]).toContain('❌ fail');
    expect(r.stdout).toContain('α = 0.01');
    // The schema's required elements and attributes, read by Python's own XML parser.
    const check = `
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == 'testsuites', root.tag
suites = root.findall('testsuite')
assert len(suites) == 1
s = suites[0]
for a in ('name', 'tests', 'failures', 'errors'):
    assert a in s.attrib, a
cases = s.findall('testcase')
assert len(cases) == int(s.get('tests')) == 1
for c in cases:
    assert c.get('name') and c.get('classname'), c.attrib
failed = [c for c in cases if c.find('failure') is not None]
assert len(failed) == int(s.get('failures')) == 1
f = failed[0].find('failure')
assert f.get('type') == 'fail' and f.get('message').startswith('fail:'), f.attrib
print(cases[0].get('name'))
`;
    const py = await execa('python3', ['-c', check, junit], { reject: false });
    expect(py.exitCode, py.stderr).toBe(0);
    expect(py.stdout.trim()).toBe('success: success >= -0.02');
    expect(await readFile(junit, 'utf8')).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>/);
  });

  it('prints the verdicts as JSON with --format json', async () => {
    const r = await gate('--baseline', ids.base!, '--candidate', ids.better!, '--format', 'json');
    expect(r.exitCode, r.stderr).toBe(0);
    const g = JSON.parse(r.stdout) as { verdict: string; metrics: Array<{ metric: string; verdict: string; decidedAt: number }> };
    expect(g.verdict).toBe('pass');
    expect(g.metrics[0]).toMatchObject({ metric: 'success', verdict: 'pass' });
    expect(g.metrics[0]!.decidedAt).toBeLessThan(400);
  });
});
