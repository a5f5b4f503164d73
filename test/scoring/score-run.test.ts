/**
 * Scoring end to end: a graph whose fixed "agent" answers a label question per episode and a
 * score__exact node, run by the real CLI (a real eval process, the shared score host); then
 * report.json, `evalctl report`, `evalctl rescore`, and the same over GraphQL.
 */
import { cp, mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import type { RunReport } from '../../src/store/report.js';
import type { RunSummary } from '../../src/store/types.js';
import { startServer, type TestServer } from '../app.helpers.js';
import { resultBytes } from '../eval-process/run-helpers.js';

const CLI = join(DIST_DIR, 'main.js');
const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
let tmp: string;
let ws: string;
let outputs: string;
let summary: RunSummary;
let runDir: string;

const evalctl = (args: string[]) => execa(process.execPath, [CLI, ...args], { reject: false, env: { ACTIVE_WORKSPACE_DIR: ws } });
const readJsonFile = async <T>(p: string): Promise<T> => JSON.parse(await readFile(p, 'utf8')) as T;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'score-run-'));
  ws = join(tmp, 'ws');
  outputs = join(tmp, 'out');
  await cp(join(FIXTURES, 'nodesets', 'qa_fixture'), join(ws, 'graph_nodes', 'qa_fixture'), { recursive: true });
  await mkdir(join(ws, 'graphs'), { recursive: true });
  await cp(join(FIXTURES, 'graphs', 'qa_labels.json'), join(ws, 'graphs', 'qa_labels.json'));
  const r = await evalctl(['run', 'qa_labels', '--episodes', '8', '--workers', '2', '--outputs', outputs, '--json']);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  summary = JSON.parse(r.stdout) as RunSummary;
  runDir = join(outputs, 'eval_runs', summary.runId);
}, 60_000);

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('score nodes in a run', () => {
  it('fill each record’s scores and the score/correct metrics', () => {
    expect(summary.status).toBe('COMPLETED');
    expect(summary.statusCounts).toEqual({ COMPLETED: 8 });
    const e3 = summary.episodes[3]!;
    expect(e3.scores).toEqual([
      {
        scorer: 'exact',
        value: 1,
        answer: 'Neutral.',
        extracted: 'neutral',
        target: 'neutral',
        explanation: '"neutral" equals target "neutral"',
      },
    ]);
    expect(e3.metrics).toEqual({ score: 1, correct: true });
    expect(summary.episodes.map((e) => e.metrics.correct)).toEqual([true, true, false, true, false, true, false, true]);
    expect(summary.aggregateMetrics.find((m) => m.name === 'correct')).toMatchObject({ mean: 5 / 8, count: 8 });
  });

  it('write report.json with the confusion matrix, per-class table and extremes', async () => {
    const report = await readJsonFile<RunReport>(join(runDir, 'report.json'));
    expect(report).toMatchObject({ runId: summary.runId, status: 'COMPLETED', episodesDone: 8, failed: 0 });
    expect(report.endings).toEqual([{ status: 'COMPLETED', count: 8, rate: 1 }]);
    expect(report.infrastructureFailures).toEqual({ count: 0, rate: 0 });
    expect(report.scorers).toHaveLength(1);
    const s = report.scorers[0]!;
    expect(s).toMatchObject({ scorer: 'exact', rescored: false, count: 8, correct: 5, accuracy: 5 / 8, unanswered: 0 });
    const c = s.classification!;
    expect(c.confusion).toEqual({
      labels: ['neg', 'neutral', 'pos'],
      predicted: ['neg', 'neutral', 'pos', '(other)'],
      matrix: [
        [2, 0, 1, 0],
        [0, 1, 0, 1],
        [1, 0, 2, 0],
      ],
    });
    expect(c.accuracy).toBe(5 / 8);
    const neg = c.perClass.find((k) => k.label === 'neg')!;
    expect(neg).toMatchObject({ precision: 2 / 3, recall: 2 / 3, support: 3 });
    expect(c.perClass.find((k) => k.label === 'neutral')).toMatchObject({ precision: 1, recall: 0.5, support: 2 });
    expect(report.worst.map((e) => e.index)).toEqual([2, 4, 6]);
    expect(report.worst[2]).toMatchObject({ episodeId: 'labels/test/6', score: 0, answer: "I don't know", target: 'neutral' });
    expect(report.best.map((e) => e.index)).toEqual([0, 1, 3, 5, 7]);
    expect(report.perEpisode.map((p) => p.metric)).toEqual(['durationMs', 'steps']);
  });

  it('gives the same scores and report with one worker as with two', async () => {
    const r = await evalctl(['run', 'qa_labels', '--episodes', '8', '--workers', '1', '--outputs', join(tmp, 'out1'), '--json']);
    expect(r.exitCode).toBe(0);
    const one = JSON.parse(r.stdout) as RunSummary;
    expect(resultBytes(one)).toBe(resultBytes(summary));
    const withoutTiming = ({ runId: _r, perEpisode: _p, ...rest }: RunReport) => rest;
    const report1 = await readJsonFile<RunReport>(join(tmp, 'out1', 'eval_runs', one.runId, 'report.json'));
    expect(withoutTiming(report1)).toEqual(withoutTiming(await readJsonFile<RunReport>(join(runDir, 'report.json'))));
  });

  it('evalctl report prints it as text and --json as the file', async () => {
    const text = await evalctl(['report', summary.runId, '--outputs', outputs]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain('Scorer exact: mean 0.625');
    expect(text.stdout).toContain('confusion matrix (rows: target, columns: predicted)');
    const json = await evalctl(['report', runDir, '--json']);
    expect(JSON.parse(json.stdout)).toEqual(await readJsonFile(join(runDir, 'report.json')));
  });
});

describe('rescoring', () => {
  it('an unknown scorer is refused before anything is written', async () => {
    const r = await evalctl(['rescore', summary.runId, '--scorer', 'fuzzy', '--outputs', outputs]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim()).toBe('evalctl: unknown scorer "fuzzy" (known: choice, exact, f1, includes, numeric, pattern)');
    expect(existsSync(join(runDir, 'rescores'))).toBe(false);
    const bad = await evalctl(['rescore', summary.runId, '--scorer', 'numeric', '--config', '{"abs_tol":"x"}', '--outputs', outputs]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('config "abs_tol" must be a number');
    expect(existsSync(join(runDir, 'rescores'))).toBe(false);
  });

  it('evalctl rescore adds a scorer’s entries beside the originals and a stream to the report', async () => {
    const before = await readFile(join(runDir, 'summary.json'), 'utf8');
    const r = await evalctl(['rescore', summary.runId, '--scorer', 'includes', '--outputs', outputs]);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('rescored 8 episode(s) with includes');
    // Records are never rewritten: the rescoring lives beside them.
    expect(await readFile(join(runDir, 'summary.json'), 'utf8')).toBe(before);
    expect(await readdir(join(runDir, 'rescores'))).toEqual(['includes.json']);
    const file = await readJsonFile<{ scorer: string; episodes: Array<{ index: number; score: Record<string, unknown> }> }>(
      join(runDir, 'rescores', 'includes.json'),
    );
    expect(file.scorer).toBe('includes');
    expect(file.episodes[3]!.score).toMatchObject({ scorer: 'includes', value: 1, answer: 'Neutral.', target: 'neutral', rescored: true });
    const report = await readJsonFile<RunReport>(join(runDir, 'report.json'));
    expect(report.scorers.map((s) => [s.scorer, s.rescored, s.correct])).toEqual([
      ['exact', false, 5],
      ['includes', true, 5],
    ]);
  });

  describe('over GraphQL', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startServer({ outputsDir: outputs });
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('rescoreRun scores again; Run.report and Episode.scores show both; an unknown scorer is UNKNOWN_SCORER', async () => {
      const unknown = await server.gql(`mutation { rescoreRun(id: "${summary.runId}", scorer: "fuzzy") { rescored } }`);
      expect(unknown.errors?.[0]?.extensions?.code).toBe('UNKNOWN_SCORER');
      expect(unknown.errors?.[0]?.message).toContain('known: choice, exact, f1, includes, numeric, pattern');
      expect(existsSync(join(runDir, 'rescores', 'fuzzy.json'))).toBe(false);

      const r = await server.gql(`mutation R($id: ID!) { rescoreRun(id: $id, scorer: "f1") { scorer rescored skipped run { report } } }`, {
        id: summary.runId,
      });
      expect(r.errors).toBeUndefined();
      const payload = r.data!.rescoreRun;
      expect(payload).toMatchObject({ scorer: 'f1', rescored: 8, skipped: 0 });
      // A closeness score (f1) gets no confusion matrix; class verdicts (exact, includes) do.
      expect((payload.run.report as RunReport).scorers.map((s) => [s.scorer, Boolean(s.classification)])).toEqual([
        ['exact', true],
        ['f1', false],
        ['includes', true],
      ]);

      const list = await server.gql('{ scorers { name config } }');
      expect(list.data!.scorers.map((x: { name: string }) => x.name)).toEqual(['choice', 'exact', 'f1', 'includes', 'numeric', 'pattern']);
      expect(list.data!.scorers.find((x: { name: string }) => x.name === 'numeric').config.abs_tol).toMatchObject({
        type: 'number',
        default: 1e-6,
      });

      const q = await server.gql(`query Q($id: ID!) { run(id: $id) { report episode(index: 6) { scores } } }`, { id: summary.runId });
      expect(q.errors).toBeUndefined();
      expect(q.data!.run.report).toEqual(await readJsonFile(join(runDir, 'report.json')));
      expect(q.data!.run.episode.scores.map((s: { scorer: string; value: number }) => [s.scorer, s.value])).toEqual([
        ['exact', 0],
        ['f1', 0],
        ['includes', 0],
      ]);
    });
  });
});
