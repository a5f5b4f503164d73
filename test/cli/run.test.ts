/** `evalctl run` as a user types it: the real CLI, a real eval process, real hosts. */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { numeric, parseRunArgs, progressLine, renderSummary } from '../../src/cli/run.js';
import { initialSummary } from '../../src/eval-process/summary-writer.js';
import { DIST_DIR } from '../../src/paths.js';
import { summarizeValues } from '../../src/store/aggregate.js';
import type { MetricAggregate, RunSummary } from '../../src/store/types.js';

const CLI = join(DIST_DIR, 'main.js');
let tmp: string;

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'cli-run-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const evalctl = (args: string[]) => execa(process.execPath, [CLI, ...args], { reject: false, env: { ACTIVE_WORKSPACE_DIR: '' } });

describe('evalctl run', () => {
  it('--json runs the batch through an eval process and prints the final summary; exit 0', async () => {
    const outputs = join(tmp, 'out');
    const r = await evalctl([
      'run',
      'gridnav_planner',
      '--episodes',
      '4',
      '--workers',
      '2',
      '--seed',
      '3',
      '--dataset',
      'mini',
      '--set',
      'agent.epsilon=0',
      '--outputs',
      outputs,
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const summary = JSON.parse(r.stdout) as RunSummary;
    expect(summary).toMatchObject({
      status: 'COMPLETED',
      graphName: 'gridnav_planner',
      episodeCount: 4,
      workerCount: 2,
      seed: 3,
      episodesDone: 4,
    });
    expect(summary.episodes.map((e) => e.index)).toEqual([0, 1, 2, 3]);
    expect(summary.episodes.map((e) => e.episodeId)).toEqual(['mini/val/0', 'mini/val/1', 'mini/val/2', 'mini/val/3']);
    // epsilon 0: the planner is optimal, so every SPL is 1.
    expect(summary.aggregateMetrics.find((m) => m.name === 'spl')).toMatchObject({ mean: 1, count: 4 });
    // The ranges env_gridnav declares are frozen into the run, and the intervals keep to them:
    // a distance of 0 in every episode is not a success rate of 0 % (no Wilson interval).
    expect(summary.metricRanges).toEqual({
      distance_to_goal: { min: 0, goal: 'min' },
      spl: { min: 0, max: 1, goal: 'max' },
      steps: { min: 0, goal: 'min' },
      success: { min: 0, max: 1, goal: 'max', primary: true },
    });
    expect(summary.aggregateMetrics.find((m) => m.name === 'distance_to_goal')).toMatchObject({
      mean: 0,
      ciMethod: 't',
      binary: false,
      ci95Low: 0,
      ci95High: 0,
    });
    const runDir = join(outputs, 'eval_runs', summary.runId);
    expect(JSON.parse(await readFile(join(runDir, 'spec.json'), 'utf8')).metricRanges).toEqual(summary.metricRanges);
    expect(JSON.parse(await readFile(join(runDir, 'score-index.json'), 'utf8')).metricRanges).toEqual(summary.metricRanges);
    expect((await readdir(runDir)).sort()).toEqual([
      '_DONE',
      'episodes',
      'graph.json',
      'manifest.json',
      'records.jsonl',
      'report.json',
      'score-index.json',
      'spec.json',
      'stderr.log',
      'stdout.log',
      'summary.json',
      'summary.sha256.json',
    ]);
    const manifest = JSON.parse(await readFile(join(runDir, 'manifest.json'), 'utf8'));
    expect(manifest.nodesets.map((n: { name: string; codeSha256: string }) => [n.name, n.codeSha256.length])).toEqual([
      ['env_gridnav', 64],
      ['planner', 64],
    ]);
    expect(manifest.runtime).toEqual({ node: process.versions.node, platform: process.platform, arch: process.arch });
  });

  it('prints a table of aggregates without --json', async () => {
    const r = await evalctl(['run', 'gridnav_planner', '--episodes', '2', '--dataset', 'mini', '--outputs', join(tmp, 'out')]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/COMPLETED: 2\/2 episodes of gridnav_planner/);
    expect(r.stdout).toMatch(/^\s+spl\s/m);
    expect(r.stdout).toContain('endings: COMPLETED 2');
  });

  it.each([
    [['run'], /missing the graph name/],
    [['run', 'no_such_graph', '--episodes', '2'], /no_such_graph/],
    [['run', 'gridnav_planner'], /--episodes is required/],
    [['run', 'gridnav_planner', '--episodes', '0'], /--episodes must be an integer in 1\.\.100000, got 0/],
    [['run', 'gridnav_planner', '--episodes', '2', '--workers', 'many'], /--workers must be an integer in 1\.\.64, got "many"/],
    [['run', 'gridnav_planner', '--episodes', '2', '--workers', '65'], /--workers must be an integer in 1\.\.64, got 65/],
    [
      ['run', 'gridnav_planner', '--episodes', '2', '--set', 'agent.epsilon="abc"'],
      /node "agent": config "epsilon" must be a number in 0\.\.1, got "abc"/,
    ],
    [['run', 'gridnav_planner', '--episodes', '2', '--set', 'epsilon'], /malformed --set "epsilon"/],
    [['run', 'gridnav_planner', '--episodes', '2', '--set', 'nobody.x=1'], /unknown node "nobody"/],
    [['run', 'gridnav_planner', '--episodes', '2', '--frobnicate'], /frobnicate/],
    // A flag of one value given twice is refused, not read as its last value.
    [
      ['run', 'gridnav_planner', '--episodes', '8', '--shard-size', '2', '--shard', '1/4', '--shard', '2/4'],
      /^evalctl: --shard is given 2 times \("1\/4", "2\/4"\); it takes one value$/,
    ],
    [['run', 'gridnav_planner', '-n', '2', '--episodes=3'], /^evalctl: --episodes is given 2 times \("2", "3"\); it takes one value$/],
    // A dataset, split or offset the env does not offer is refused before the run exists.
    [
      ['run', 'gridnav_planner', '--episodes', '2', '--dataset', 'nowhere'],
      /^evalctl: dataset "nowhere" is not offered by env_gridnav; choices: mini, standard, large$/,
    ],
    [
      ['run', 'gridnav_planner', '--episodes', '2', '--dataset', 'mini', '--split', 'test', '--episode-offset', '199'],
      /^evalctl: episodes 199\.\.200 are not all offered by env_gridnav \(mini\/test\): it has episode 0\.\.199$/,
    ],
  ])('bad input %j: one-line error, exit 2, no run dir', async (args, message) => {
    const outputs = join(tmp, 'out');
    const r = await evalctl([...args, '--outputs', outputs]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
    expect(existsSync(join(outputs, 'eval_runs')) ? await readdir(join(outputs, 'eval_runs')) : []).toEqual([]);
  });

  it("an episode count past the env's default split fails the run before any episode: exit 2, the reason on stderr", async () => {
    const reason = 'episodes 0..500 are not all offered by env_gridnav (standard/val): it has episode 0..499';
    const r = await evalctl(['run', 'gridnav_planner', '--episodes', '501', '--outputs', join(tmp, 'out'), '--json']);
    expect(r.exitCode).toBe(2);
    const summary = JSON.parse(r.stdout) as RunSummary;
    expect(summary.status).toBe('FAILED');
    expect(summary.episodes).toEqual([]);
    expect(summary.error).toEqual({ code: 'BAD_USER_INPUT', message: reason });
    expect(r.stderr).toContain(reason);
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s cancels the run: the eval process writes a CANCELLED summary and the CLI exits %i', async (signal, exitCode) => {
    const outputs = join(tmp, 'out');
    const cli = execa(
      process.execPath,
      [CLI, 'run', 'gridnav_planner', '--episodes', '30', '--set', 'env.step_latency_ms=20', '--outputs', outputs, '--json'],
      { reject: false },
    );
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const runs = existsSync(join(outputs, 'eval_runs')) ? await readdir(join(outputs, 'eval_runs')) : [];
      if (runs[0] && existsSync(join(outputs, 'eval_runs', runs[0], 'episodes', 'ep0000', 'log.jsonl'))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    cli.kill(signal);
    const r = await cli;
    expect(r.exitCode).toBe(exitCode);
    const summary = JSON.parse(r.stdout) as RunSummary;
    expect(summary.status).toBe('CANCELLED');
    expect(summary.episodesDone).toBeLessThan(30);
  });
});

describe('evalctl run argument parsing and rendering', () => {
  it('reads a number flag only when it is written as a decimal number', () => {
    expect([numeric('5'), numeric('-4'), numeric(' 2 '), numeric('2.5'), numeric('1e3'), numeric('.5')]).toEqual([
      5, -4, 2, 2.5, 1000, 0.5,
    ]);
    // Left as text, for the schema to refuse naming the flag.
    expect([numeric('0x10'), numeric('0b11'), numeric('Infinity'), numeric(''), numeric('1_000')]).toEqual([
      '0x10',
      '0b11',
      'Infinity',
      '',
      '1_000',
    ]);
  });

  it('refuses --shard with --server, which spreads a run itself', () => {
    expect(() => parseRunArgs(['g', '--episodes', '8', '--shard', '1/2', '--server', 'http://127.0.0.1:4000'])).toThrow(
      /--shard plays part of a run here, for evalctl merge; it does not go with --server/,
    );
  });

  it('reads every flag', () => {
    const a = parseRunArgs([
      'g',
      '--episodes',
      '5',
      '--workers',
      '3',
      '--seed=-4',
      '--step-budget',
      '9',
      '--set',
      'a.b=1',
      '--set',
      'a.c="x"',
      '--dataset',
      'd',
      '--split',
      's',
      '--episode-offset',
      '2',
      '--per-step-timeout',
      '0.5',
      '--json',
      '--outputs',
      '/o',
      '--name',
      'eps 0.2',
      '--tag',
      'sweep',
      '--tag',
      'eps',
      '--note',
      'why',
    ]);
    expect(a).toMatchObject({
      input: {
        graphName: 'g',
        name: 'eps 0.2',
        tags: ['sweep', 'eps'],
        note: 'why',
        episodeCount: 5,
        workerCount: 3,
        seed: -4,
        stepBudget: 9,
        overrides: { a: { b: 1, c: 'x' } },
        dataset: 'd',
        split: 's',
        episodeOffset: 2,
        perStepTimeoutSec: 0.5,
      },
      json: true,
      outputsDir: '/o',
    });
  });

  it('draws a progress line with done/total, ETA and running means, and an end table', () => {
    const s: RunSummary = {
      ...initialSummary(
        { runId: '20260101_000000', graphName: 'g', episodeCount: 10, workerCount: 2, seed: 0, priority: 0, createdAt: '' },
        'RUNNING',
      ),
      episodesDone: 4,
      aggregateMetrics: [
        { name: 'spl', mean: 0.5, count: 4, stderr: 0.1, min: 0, max: 1 },
        { name: 'success', mean: 0.75, count: 4, stderr: 0.25, min: 0, max: 1 },
      ],
      statusCounts: { COMPLETED: 4 },
    };
    const line = progressLine(s, 8000);
    expect(line).toContain('4/10');
    expect(line).toContain('ETA 0:12');
    expect(line).toContain('SR 0.7500');
    expect(line.indexOf('SR')).toBeLessThan(line.indexOf('spl'));
    const table = renderSummary(s, '/runs/x');
    expect(table).toMatch(/success\s+0\.7500\s+0\.2500\s+0\s+1\s+4/);
    expect(table).toContain('endings: COMPLETED 4');
  });

  it('shows a statistic summary.json holds as null as – instead of failing on the finished run', () => {
    const s: RunSummary = {
      ...initialSummary(
        { runId: '20260101_000000', graphName: 'g', episodeCount: 2, workerCount: 1, seed: 0, priority: 0, createdAt: '' },
        'COMPLETED',
      ),
      episodesDone: 2,
      // As JSON.parse gives it back: a mean that was not finite when written reads null.
      aggregateMetrics: [{ name: 'big', mean: null, count: 2, stderr: null, min: 1e308, max: 1e308 } as unknown as MetricAggregate],
    };
    expect(progressLine(s, 1000)).toContain('big –');
    expect(renderSummary(s, '/runs/x')).toMatch(/big\s+–\s+–\s+1e\+308\s+1e\+308\s+2\s+–/);
  });

  it('names the clusters behind the Wilson interval of a clustered rate at 100 %', () => {
    const s: RunSummary = {
      ...initialSummary(
        { runId: '20260101_000000', graphName: 'qa_llm', episodeCount: 4, workerCount: 1, seed: 0, priority: 0, createdAt: '' },
        'COMPLETED',
      ),
      episodesDone: 4,
      aggregateMetrics: [summarizeValues('correct', [1, 1, 1, 1], ['p', 'p', 'q', 'q'])],
    };
    expect(renderSummary(s, '/runs/x')).toMatch(/correct\s+1\s+0\s+1\s+1\s+4\s+\[0\.3424, 1\] wilson C=2/);
  });

  it('shows the clustered standard error beside a clustered interval, and the logit interval of a clustered rate', () => {
    // 20 values in 5 clusters, p = 0.8: statsmodels cluster-robust SE 0.2 (sd/√n 0.0918); logit interval [0.1106, 0.9923] (test/stats/stats.test.ts).
    const v = [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];
    const g = v.map((_, i) => 'abcde'[Math.floor(i / 4)]!);
    const s: RunSummary = {
      ...initialSummary(
        { runId: '20260101_000000', graphName: 'qa_llm', episodeCount: 20, workerCount: 1, seed: 0, priority: 0, createdAt: '' },
        'COMPLETED',
      ),
      episodesDone: 20,
      aggregateMetrics: [summarizeValues('correct', v, g)],
    };
    expect(renderSummary(s, '/runs/x')).toMatch(/correct\s+0\.8000\s+0\.2000\s+0\s+1\s+20\s+\[0\.1106, 0\.9923\] clustered-logit-t C=5/);
  });

  it('reads --repeats and, on a run with repeats, says what n counts and which dial narrows the bar', () => {
    expect((parseRunArgs(['g', '--episodes', '6', '--repeats', '3']) as { input: unknown }).input).toMatchObject({
      episodeCount: 6,
      repeats: 3,
    });
    expect(() => parseRunArgs(['g', '--episodes', '6', '--repeats', '0'])).toThrow(/--repeats must be an integer in 1\.\.100/);
    const s: RunSummary = {
      ...initialSummary(
        { runId: '20260101_000000', graphName: 'g', episodeCount: 6, repeats: 3, workerCount: 1, seed: 0, priority: 0, createdAt: '' },
        'COMPLETED',
      ),
      episodesDone: 18,
      aggregateMetrics: [{ name: 'steps', mean: 9, count: 6, stderr: 1, min: 4, max: 14, repeats: 3, betweenVar: 1, withinVar: 3 }],
    };
    expect(s.episodeCount).toBe(18);
    const table = renderSummary(s, '/runs/x');
    expect(table).toContain('18/18 plays (6 episodes × 3 repeats)');
    expect(table).toContain('3 plays per episode: n counts episodes');
    expect(table).toMatch(
      /steps: σ²_between 1, σ²_within 3; more episodes shrink the bar faster than more repeats: ×2 episodes → SE ×0\.71, ×2 repeats → SE ×0\.87/,
    );
  });
});
