/** The score index: the same comparison as from the records, and never used for a summary.json it was not built from. */
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/compare/compare-runs.js';
import { scoreTable } from '../../src/compare/episode-scores.js';
import { readScoreIndex, summaryStamp, writeScoreIndex, writeScoreIndexOfSummary } from '../../src/compare/score-index.js';
import { createPrng } from '../../src/core/prng.js';
import type { EpisodeRecord, RunSummary } from '../../src/store/types.js';

const STATUSES = ['COMPLETED', 'COMPLETED', 'COMPLETED', 'BUDGET_EXHAUSTED', 'ERROR', 'CANCELLED', 'INFRA_ERROR'] as const;

/** Records with repeats, missing metrics, booleans, endings that do not count and (optionally) clusters. */
function records(seed: number, episodes: number, offset: number, repeats: number, clusters: boolean): EpisodeRecord[] {
  const r = createPrng(seed);
  const out: EpisodeRecord[] = [];
  for (let i = 0; i < episodes; i++)
    for (let k = 0; k < repeats; k++) {
      const metrics: EpisodeRecord['metrics'] = { success: r.next() < 0.6 ? 1 : 0, spl: r.next() };
      if (r.next() < 0.9) metrics.steps = Math.floor(r.next() * 50);
      if (r.next() < 0.2) metrics.ok = r.next() < 0.5;
      out.push({
        index: i * repeats + k,
        episodeId: `d/val/${i + offset}`,
        status: STATUSES[Math.floor(r.next() * STATUSES.length)]!,
        steps: 1,
        metrics,
        seed: i,
        workerId: 0,
        durationMs: 1,
        startedAt: '',
        finishedAt: '',
        stepBudget: 10,
        assets: [],
        ...(repeats > 1 ? { repeat: k } : {}),
        ...(clusters && i % 5 !== 0 ? { cluster: `c${i % 6}` } : {}),
      });
    }
  return out;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'score-index-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A run dir with a summary.json of `episodes` and its index. */
async function indexedRun(name: string, episodes: EpisodeRecord[], metricRanges?: RunSummary['metricRanges']): Promise<string> {
  const runDir = join(dir, name);
  await rm(runDir, { recursive: true, force: true });
  const { mkdir } = await import('node:fs/promises');
  await mkdir(runDir);
  const summary = {
    runId: name,
    graphName: 'g',
    status: 'COMPLETED',
    ...(metricRanges ? { metricRanges } : {}),
    episodes,
  } as unknown as RunSummary;
  await writeFile(join(runDir, 'summary.json'), JSON.stringify(summary));
  expect(await writeScoreIndexOfSummary(runDir, summary)).toBe(true);
  return runDir;
}

describe('score index', () => {
  it('gives byte-identical comparisons to the records it was built from (repeats, clusters, partial overlap)', async () => {
    for (let s = 1; s <= 6; s++) {
      const runs = [
        records(s, 60, 0, 1 + (s % 3), s % 2 === 0),
        records(s + 10, 60, s % 4, 1 + (s % 2), s % 3 === 0),
        records(s + 20, 40, 0, 1, false),
      ];
      // Some runs declare ranges (a count that is 0/1 then stays a count); the index carries them.
      const ranges = s % 2 === 0 ? { spl: { min: 0, max: 1 }, success: { min: 0, max: 1 }, ok: { min: 0, max: 3 } } : undefined;
      const dirs = await Promise.all(runs.map((r, i) => indexedRun(`r${s}_${i}`, r, ranges)));
      const indexed = await Promise.all(dirs.map(async (d, i) => (await readScoreIndex(d, `r${s}_${i}`, (await summaryStamp(d))!))!));
      for (const x of indexed) expect(x).not.toBeNull();
      expect(indexed[0]!.status).toBe('COMPLETED');
      expect(indexed[0]!.scores.metricRanges).toEqual(ranges);
      const direct = compareRuns({ runId: 'a', scores: scoreTable(runs[0]!, ranges) }, [
        { runId: 'b', scores: scoreTable(runs[1]!, ranges) },
        { runId: 'c', scores: scoreTable(runs[2]!, ranges) },
      ]);
      const viaIndex = compareRuns({ runId: 'a', scores: indexed[0]!.scores }, [
        { runId: 'b', scores: indexed[1]!.scores },
        { runId: 'c', scores: indexed[2]!.scores },
      ]);
      expect(JSON.stringify(viaIndex)).toBe(JSON.stringify(direct));
      // The map view other readers use is the same table too.
      expect(indexed[1]!.scores.episodes).toEqual(scoreTable(runs[1]!).episodes);
    }
  });

  it('is ignored once summary.json changes, and for another run or a damaged file', async () => {
    const runDir = await indexedRun('stale', records(1, 10, 0, 1, false));
    const stamp = (await summaryStamp(runDir))!;
    expect(await readScoreIndex(runDir, 'stale', stamp)).not.toBeNull();
    expect(await readScoreIndex(runDir, 'other', stamp)).toBeNull();
    // A rewrite (rescore, retry) moves the mtime.
    await utimes(join(runDir, 'summary.json'), new Date(), new Date(Date.now() + 5000));
    expect(await readScoreIndex(runDir, 'stale', (await summaryStamp(runDir))!)).toBeNull();
    await writeFile(join(runDir, 'score-index.json'), '{"format":"batch-eval/score-index@1","runId":"stale"');
    expect(await readScoreIndex(runDir, 'stale', stamp)).toBeNull();
  });

  it('is not written for a mean that JSON cannot hold', async () => {
    const table = scoreTable(records(2, 3, 0, 1, false));
    [...table.episodes.values()][0]!.values.set('spl', Number.POSITIVE_INFINITY);
    expect(
      await writeScoreIndex(join(dir, 'nowhere'), { runId: 'x', graphName: 'g', status: 'COMPLETED' }, table, { mtimeMs: 1, size: 1 }),
    ).toBe(false);
  });
});
