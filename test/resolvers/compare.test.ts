/** compareRuns over a real server on run directories written by hand, beside `evalctl compare` on the same folder. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startServer, type TestServer } from '../app.helpers.js';
import { scoredRecord, writeDatasetManifest, writeScoredRun } from '../support/scored-run.js';

const MAIN = resolve(import.meta.dirname, '../../dist/main.js');
let dir: string;
let outputs: string;
let server: TestServer;
let a: string;
let b: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'resolvers-compare-'));
  outputs = join(dir, 'outputs');
  const episodes = [0, 1, 2, 3].map((i) => scoredRecord(i, { correct: i % 2 }));
  const runA = await writeScoredRun(outputs, new Date(2026, 0, 1, 0, 0, 0), episodes);
  const runB = await writeScoredRun(outputs, new Date(2026, 0, 1, 0, 0, 1), episodes);
  await writeDatasetManifest(runA.dir, { 'test.jsonl': 'a'.repeat(64) });
  await writeDatasetManifest(runB.dir, { 'test.jsonl': 'b'.repeat(64) });
  a = runA.runId;
  b = runB.runId;
  server = await startServer({ outputsDir: outputs });
});
afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

const WARNINGS = `query($b: ID!, $c: [ID!]!) { compareRuns(baseline: $b, candidates: $c) { candidates { candidate { id } warnings } } }`;

describe('compareRuns warnings', () => {
  it('are the warnings `evalctl compare --json` gives for the same pair', async () => {
    const r = await server.gql(WARNINGS, { b: a, c: [b] });
    expect(r.errors).toBeUndefined();
    const api = r.data!.compareRuns.candidates[0].warnings;
    expect(api).toEqual(['dataset chg: files differ (test.jsonl)']);
    const cli = JSON.parse((await execa('node', [MAIN, 'compare', a, b, '--json', '--outputs', outputs])).stdout);
    expect(cli.candidates[0].warnings).toEqual(api);
  });
});

describe('compareRuns input', () => {
  it('refuses a run given twice (BAD_USER_INPUT, naming it): as two candidates, or as the baseline and a candidate', async () => {
    for (const [base, cands] of [
      [a, [b, b]],
      [a, [b, a]],
    ] as const) {
      const r = await server.gql(WARNINGS, { b: base, c: cands });
      expect(r.data?.compareRuns ?? null).toBeNull();
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(r.errors![0]!.message).toContain(`run ${cands[1]} is given twice`);
    }
  });
});
