/**
 * repeats: K plays each episode K times as run indices i × K + k, each with its own derived
 * seed. gridnav_planner's epsilon noise draws from the seed, so repeats of one maze differ:
 * the aggregates pool them per episode, report the between/within variance, and the records
 * are identical at 1 and 3 workers. Repeat 0 keeps the seed (and so the play) of a plain run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/compare/compare-runs.js';
import { scoreTable } from '../../src/compare/episode-scores.js';
import { runBatch } from '../../src/eval-process/run-batch.js';
import { deriveSeed } from '../../src/core/prng.js';
import type { RunSpec, RunSummary } from '../../src/store/types.js';
import { isAlive, makeRun, resultBytes, stripTiming } from './run-helpers.js';

let outputs: string;
const pids: number[] = [];
let plain: RunSummary;
let r1: RunSummary;
let r3: RunSummary;

const N = 6;
const K = 3;

async function run(spec: Partial<RunSpec>): Promise<RunSummary> {
  const { dir } = await makeRun(outputs, { graphName: 'gridnav_planner', episodeCount: N, dataset: 'mini', seed: 11, ...spec });
  // Every worker's hosts boot at once (as with a core per host), so each of the 3 workers gets episodes of so short a run;
  // in one play lane, since a second lane's thread may boot only after so short a run's work has run out.
  return runBatch({ runDir: dir, cores: 64, hostEnv: { EVAL_PLAY_LANES: '1' }, onHostStarted: (h) => pids.push(h.pid) });
}

beforeAll(async () => {
  outputs = await mkdtemp(join(tmpdir(), 'repeats-'));
  plain = await run({ workerCount: 2 });
  r1 = await run({ repeats: K, workerCount: 1 });
  r3 = await run({ repeats: K, workerCount: 3 });
}, 120_000);
afterAll(async () => {
  for (const pid of pids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  await rm(outputs, { recursive: true, force: true });
});

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sampleVar = (xs: readonly number[]) => {
  const m = mean(xs);
  return xs.reduce((a, x) => a + (x - m) * (x - m), 0) / (xs.length - 1);
};

describe('repeats', () => {
  it('plays N × K records, index i × K + k, with the episode of i and a distinct seed per play', () => {
    expect(r1.status).toBe('COMPLETED');
    expect(r1.episodeCount).toBe(N * K);
    expect(r1.episodesDone).toBe(N * K);
    expect(r1.repeats).toBe(K);
    expect(r1.episodes.map((e) => e.index)).toEqual(Array.from({ length: N * K }, (_, r) => r));
    for (const e of r1.episodes) {
      const i = Math.floor(e.index / K);
      expect(e.repeat).toBe(e.index % K);
      expect(e.episodeId).toBe(plain.episodes[i]!.episodeId);
      expect(e.task).toBe(plain.episodes[i]!.task);
    }
    expect(new Set(r1.episodes.map((e) => e.seed)).size).toBe(N * K);
    // Repeat 0 is the plain run's play: same seed, same maze, same everything.
    for (let i = 0; i < N; i++) {
      const { index: _a, repeat: _r, ...first } = stripTiming(r1.episodes[i * K]!);
      const { index: _b, ...ref } = stripTiming(plain.episodes[i]!);
      expect(first).toEqual(ref);
      expect(plain.episodes[i]!.seed).toBe(deriveSeed(11, i));
    }
    // The planner's epsilon draws from the seed: some episode's plays differ.
    expect(r1.episodes.some((e) => e.repeat! > 0 && e.steps !== r1.episodes[e.index - e.repeat!]!.steps)).toBe(true);
    // A plain run has no repeat fields anywhere.
    expect(plain.repeats).toBeUndefined();
    expect(plain.episodes.some((e) => 'repeat' in e)).toBe(false);
    expect(plain.aggregateMetrics.some((m) => m.repeats !== undefined || m.withinVar !== undefined)).toBe(false);
  });

  it('gives identical records and aggregates at 1 and 3 workers', () => {
    expect(r3.status).toBe('COMPLETED');
    expect(new Set(r3.episodes.map((e) => e.workerId)).size).toBe(3);
    expect(resultBytes(r3)).toBe(resultBytes(r1));
  });

  it('aggregates per episode first, with between/within variance matching a direct computation', () => {
    const steps = r1.aggregateMetrics.find((m) => m.name === 'steps')!;
    const groups = Array.from({ length: N }, (_, i) =>
      r1.episodes.filter((e) => Math.floor(e.index / K) === i).map((e) => Number(e.metrics.steps)),
    );
    const means = groups.map(mean);
    expect(steps.count).toBe(N);
    expect(steps.repeats).toBe(K);
    expect(steps.mean).toBeCloseTo(mean(means), 12);
    expect(steps.stderr).toBeCloseTo(Math.sqrt(sampleVar(means) / N), 12);
    const within = mean(groups.map(sampleVar));
    const between = Math.max(0, sampleVar(means) - within / K);
    expect(within).toBeGreaterThan(0);
    expect(steps.withinVar).toBeCloseTo(within, 10);
    expect(steps.betweenVar).toBeCloseTo(between, 10);
    // Per task too: the same fold over the task's episodes.
    const tasks = Object.values(r1.aggregateByTask).flat();
    expect(tasks.length).toBeGreaterThan(0);
    expect(tasks.every((m) => m.repeats === K)).toBe(true);
  });

  it('compareRuns pairs a repeat run with a plain run by episode, pooling the repeats', () => {
    const c = compareRuns(
      { runId: 'plain', scores: scoreTable(plain.episodes) },
      [{ runId: 'rep', scores: scoreTable(r1.episodes) }],
      ['steps'],
    );
    const cc = c.candidates[0]!;
    expect(cc.overlap).toBe(N);
    expect(cc.partial).toBe(false);
    const m = cc.metrics[0]!;
    expect(m.n).toBe(N);
    const groups = Array.from({ length: N }, (_, i) =>
      mean(r1.episodes.filter((e) => Math.floor(e.index / K) === i).map((e) => Number(e.metrics.steps))),
    );
    const diffs = groups.map((g, i) => g - Number(plain.episodes[i]!.metrics.steps));
    expect(m.meanDiff).toBeCloseTo(mean(diffs), 12);
  });
});
