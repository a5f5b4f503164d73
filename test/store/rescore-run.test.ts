/** rescoreRun on a run directory written by hand: a sample the scorer cannot score is named by episode and sample. */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ScoreEntry } from '../../src/core/score-entry.js';
import { RescoreTimeoutError, rescoreRunInThread } from '../../src/store/rescore-in-thread.js';
import { rescoreRun } from '../../src/store/rescore-run.js';

let runDir: string;
beforeEach(async () => {
  runDir = await mkdtemp(join(tmpdir(), 'rescore-run-'));
});
afterEach(async () => {
  await rm(runDir, { recursive: true, force: true });
});

const scored = (answer: string, target: ScoreEntry['target']): ScoreEntry[] => [
  { scorer: 'includes', value: 1, answer, extracted: answer, target, explanation: '' },
];

function record(index: number, sampleId: string, scores: ScoreEntry[]): Record<string, unknown> {
  return {
    index,
    episodeId: `qa/test/${sampleId}`,
    sampleId,
    status: 'COMPLETED',
    steps: 1,
    metrics: {},
    seed: index,
    workerId: 0,
    durationMs: 1,
    startedAt: '2026-01-01T12:00:00.000Z',
    finishedAt: '2026-01-01T12:00:01.000Z',
    stepBudget: 5,
    assets: [],
    scores,
  };
}

async function writeRun(episodes: Array<Record<string, unknown>>): Promise<void> {
  await mkdir(runDir, { recursive: true });
  const summary = {
    seq: 1,
    runId: '20260101_120000',
    status: 'COMPLETED',
    graphName: 'g',
    episodeCount: episodes.length,
    workerCount: 1,
    seed: 0,
    priority: 0,
    episodesDone: episodes.length,
    createdAt: '2026-01-01T11:59:59.000Z',
    startedAt: '2026-01-01T12:00:00.000Z',
    finishedAt: '2026-01-01T12:00:05.000Z',
    error: null,
    aggregateMetrics: [],
    aggregateByTask: {},
    statusCounts: { COMPLETED: episodes.length },
    timedOut: false,
    episodes,
  };
  await writeFile(join(runDir, 'summary.json'), JSON.stringify(summary));
}

describe('rescoreRun', () => {
  it('names the episode and the sample a scorer that needs a target cannot score, and writes nothing', async () => {
    await writeRun([record(0, 'q1', scored('Paris', 'Paris')), record(1, 'q7', scored('Lyon', null))]);
    const err = await rescoreRun({ runDir, scorer: 'exact' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect((err as Error).message).toBe('episode 1 (qa/test/q7, sample q7): scorer "exact" needs a target and the sample has none');
    expect(existsSync(join(runDir, 'rescores'))).toBe(false);
  });

  it('rescores every stored answer when each can be scored', async () => {
    await writeRun([record(0, 'q1', scored('Paris', 'Paris')), record(1, 'q7', scored('Lyon', 'Paris'))]);
    const { rescore } = await rescoreRun({ runDir, scorer: 'exact' });
    expect(rescore.episodes.map((e) => [e.index, e.score.value])).toEqual([
      [0, 1],
      [1, 0],
    ]);
  });
});

describe("rescoreRunInThread (the server's rescoring)", () => {
  it('gives the same rescoring as in-process, and the same coded refusals', async () => {
    await writeRun([record(0, 'q1', scored('Paris', 'Paris')), record(1, 'q7', scored('Lyon', 'Paris'))]);
    const { rescore } = await rescoreRunInThread({ runDir, scorer: 'exact', createdAt: new Date('2026-01-02T00:00:00Z') });
    const here = await rescoreRun({ runDir, scorer: 'exact', createdAt: new Date('2026-01-02T00:00:00Z') });
    expect(rescore).toEqual(here.rescore);
    await expect(rescoreRunInThread({ runDir, scorer: 'nope' })).rejects.toMatchObject({ code: 'UNKNOWN_SCORER' });
  });

  it('stops a pattern that backtracks for ever at its time limit, writes nothing, and leaves this thread free', async () => {
    // Not nested quantifiers (so no static check refuses it), yet 2^30 ways to fail on 30 a's and a "!".
    await writeRun([record(0, 'q1', scored(`${'a'.repeat(30)}!`, 'a'))]);
    let ticks = 0;
    const tick = setInterval(() => ticks++, 10);
    const err = await rescoreRunInThread({ runDir, scorer: 'pattern', config: { pattern: '^(a|a)*$' } }, 500).then(
      () => undefined,
      (e: unknown) => e,
    );
    clearInterval(tick);
    expect(err).toBeInstanceOf(RescoreTimeoutError);
    expect((err as Error).message).toContain('took longer than 0.5 s and was stopped; nothing was written');
    expect(ticks).toBeGreaterThan(5);
    expect(existsSync(join(runDir, 'rescores'))).toBe(false);
  });
});
