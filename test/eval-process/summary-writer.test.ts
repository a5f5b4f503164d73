import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ASSET_WRITE_BEHIND_BYTES, assetWritesBehind, EpisodeWriter } from '../../src/eval-process/episode-writer.js';
import { SummaryWriter, initialSummary } from '../../src/eval-process/summary-writer.js';
import { createRunDir, readSummary, writeSummary } from '../../src/store/run-dir.js';
import type { EpisodeRecord, RunSpec } from '../../src/store/types.js';
import { runSpecSchema } from '../../src/spec/run-spec.js';
import { computeAggregates } from '../../src/store/aggregate.js';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'summary-writer-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const spec = (runId: string): RunSpec =>
  runSpecSchema.parse({ runId, graphName: 'g', episodeCount: 4, workerCount: 2, createdAt: new Date(0).toISOString() });

const record = (index: number, success: boolean): EpisodeRecord => ({
  index,
  episodeId: `g/${index}`,
  status: 'COMPLETED',
  steps: 2,
  metrics: { success },
  seed: index,
  workerId: index % 2,
  durationMs: 5,
  startedAt: '',
  finishedAt: '',
  stepBudget: 10,
  assets: [],
});

describe('SummaryWriter', () => {
  it('with minIntervalMs 0 rewrites summary.json at each episode with a rising seq, episodes in index order, and leaves no temp files', async () => {
    const { runId, dir } = createRunDir(tmp);
    await writeSummary(dir, { ...initialSummary(spec(runId)), seq: 7 });
    const writer = await SummaryWriter.open(dir, spec(runId), { minIntervalMs: 0 });
    const seqs: number[] = [];
    seqs.push((await writer.start(123)).seq);
    // Completion order 3, 0, 2, 1: the summary still lists episodes by index.
    for (const [i, success] of [
      [3, true],
      [0, false],
      [2, true],
      [1, true],
    ] as const) {
      const s = await writer.addEpisode(record(i, success));
      seqs.push(s.seq);
      expect((await readSummary(dir)).episodesDone).toBe(s.episodesDone);
    }
    seqs.push((await writer.finish('COMPLETED')).seq);
    expect(seqs).toEqual([8, 9, 10, 11, 12, 13]);
    const onDisk = await readSummary(dir);
    expect(onDisk.seq).toBe(13);
    expect(onDisk.status).toBe('COMPLETED');
    expect(onDisk.pid).toBeUndefined();
    expect(onDisk.episodesDone).toBe(4);
    expect(onDisk.episodes.map((e) => e.index)).toEqual([0, 1, 2, 3]);
    expect(onDisk.aggregateMetrics).toMatchObject([
      { name: 'success', mean: 0.75, count: 4, stderr: 0.25, min: 0, max: 1, binary: true, ciMethod: 'wilson' },
    ]);
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('coalesces the episodes of one interval into one write, and finish writes them all, byte for byte as a whole-file write would', async () => {
    const { runId, dir } = createRunDir(tmp);
    // An hour between writes: only the first episode after the start may be written before finish.
    const writer = await SummaryWriter.open(dir, spec(runId), { minIntervalMs: 3_600_000 });
    const started = await writer.start(123);
    expect(started.seq).toBe(1);
    const views = [];
    const added: EpisodeRecord[] = [];
    for (const i of [1, 3, 0, 2]) {
      added.push(record(i, i !== 2));
      views.push(await writer.addEpisode(added[added.length - 1]!));
      // Before 0 is in, 1 and 3 are past the fold: the aggregates are still over every record added.
      const { aggregateMetrics, aggregateByTask, statusCounts, timedOut } = writer.summary;
      expect(JSON.stringify({ aggregateMetrics, aggregateByTask, statusCounts, timedOut })).toBe(JSON.stringify(computeAggregates(added)));
    }
    // Each view counts its episode, though summary.json does not yet; the records are in records.jsonl at once.
    expect(views.map((v) => v.episodesDone)).toEqual([1, 2, 3, 4]);
    expect(JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')).episodesDone).toBe(0);
    const final = await writer.finish('CANCELLED');
    expect(final.seq).toBe(2);
    const text = await readFile(join(dir, 'summary.json'), 'utf8');
    // summary.json holds the state and the aggregates, never the records.
    const { episodes: _none, ...head } = final;
    expect(text).toBe(JSON.stringify(head, null, 2) + '\n');
    expect(JSON.parse(text)).not.toHaveProperty('episodes');
    expect(final.aggregateMetrics).toMatchObject([{ name: 'success', mean: 0.75, count: 4 }]);
    expect(final.statusCounts).toEqual({ COMPLETED: 4 });
    // One line per record in the order they finished; readers list them by index.
    const lines = (await readFile(join(dir, 'records.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).index)).toEqual([1, 3, 0, 2]);
    expect(lines[0]).toBe(JSON.stringify(added[0]));
    expect((await readSummary(dir)).episodes).toEqual([...added].sort((a, b) => a.index - b.index));
  });

  it('a later record of an index replaces the earlier one, in records.jsonl and in the aggregates', async () => {
    const { runId, dir } = createRunDir(tmp);
    const writer = await SummaryWriter.open(dir, spec(runId), { minIntervalMs: 0 });
    await writer.start(123);
    for (const i of [0, 1, 2, 3]) await writer.addEpisode(record(i, i !== 1));
    // Episode 1 played again (folded already): the aggregates come from records.jsonl from now on.
    await writer.addEpisode(record(1, true));
    const final = await writer.finish('COMPLETED');
    expect(final.episodesDone).toBe(4);
    expect(final.aggregateMetrics).toMatchObject([{ name: 'success', mean: 1, count: 4 }]);
    const onDisk = await readSummary(dir);
    expect(onDisk.episodes.map((e) => [e.index, e.metrics.success])).toEqual([
      [0, true],
      [1, true],
      [2, true],
      [3, true],
    ]);
    expect((await readFile(join(dir, 'records.jsonl'), 'utf8')).trimEnd().split('\n')).toHaveLength(5);
  });

  it('flush() writes the episodes waiting for the next interval', async () => {
    const { runId, dir } = createRunDir(tmp);
    const writer = await SummaryWriter.open(dir, spec(runId), { minIntervalMs: 3_600_000 });
    await writer.start(123);
    await writer.addEpisode(record(0, true));
    await writer.addEpisode(record(1, false));
    await writer.flush();
    const onDisk = await readSummary(dir);
    expect(onDisk.status).toBe('RUNNING');
    expect(onDisk.episodes.map((e) => e.index)).toEqual([0, 1]);
    expect(onDisk.aggregateMetrics[0]).toMatchObject({ name: 'success', mean: 0.5, count: 2 });
  });
});

describe('EpisodeWriter', () => {
  it('writes the firing log, the assets and episode.json into the episode folder', async () => {
    const { dir } = createRunDir(tmp);
    const w = EpisodeWriter.open(dir, 7);
    w.logFiring({ step: 0, nodeId: 'env', type: 'env_gridnav__step', ms: 1 });
    w.logFiring({ step: 0, nodeId: 'agent', type: 'planner__act', ms: 1 });
    w.writeAsset({ name: '../../escape.png', mime: 'image/png', data: Buffer.from([1, 2, 3]), nodeId: 'env', step: 1 });
    await w.finish(record(7, true));
    await w.finish(record(7, true));
    const epDir = join(dir, 'episodes', 'ep0007');
    const lines = (await readFile(join(epDir, 'log.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).nodeId)).toEqual(['env', 'agent']);
    expect(await readdir(join(epDir, 'assets'))).toEqual(['escape.png']);
    expect(JSON.parse(await readFile(join(epDir, 'episode.json'), 'utf8')).index).toBe(7);
  });

  it('counts asset bytes not yet on disk: past the write-behind limit a step is told to wait, and no longer once they are written', async () => {
    const { dir } = createRunDir(tmp);
    const w = EpisodeWriter.open(dir, 4);
    expect(assetWritesBehind()).toBe(false);
    const written = w.writeAsset({ name: 'small.bin', mime: 'application/octet-stream', data: Buffer.alloc(16), nodeId: 'env', step: 0 });
    expect(assetWritesBehind()).toBe(false);
    const big = w.writeAsset({
      name: 'big.bin',
      mime: 'application/octet-stream',
      data: Buffer.alloc(ASSET_WRITE_BEHIND_BYTES + 1),
      nodeId: 'env',
      step: 1,
    });
    // Handed to the disk, not yet written: nothing settles before this turn of the event loop ends.
    expect(assetWritesBehind()).toBe(true);
    await Promise.all([written, big]);
    expect(assetWritesBehind()).toBe(false);
    await w.finish(record(4, true));
    expect((await readdir(join(dir, 'episodes', 'ep0004', 'assets'))).sort()).toEqual(['big.bin', 'small.bin']);
  });

  it('makes the folder when first needed: a small episode at finish, a log past 64 KB as it streams', async () => {
    const { dir } = createRunDir(tmp);
    const small = EpisodeWriter.open(dir, 1);
    small.logFiring({ step: 0, nodeId: 'env', type: 'env_gridnav__step', ms: 1 });
    await EpisodeWriter.open(dir, 2).finish(record(2, true));
    expect(existsSync(join(dir, 'episodes', 'ep0001'))).toBe(false);
    await small.finish(record(1, true));
    expect(await readdir(join(dir, 'episodes', 'ep0001'))).toEqual(['episode.json', 'log.jsonl']);

    const big = EpisodeWriter.open(dir, 3);
    for (let i = 0; i < 1200; i++)
      big.logFiring({ step: i, nodeId: 'env', type: 'env_gridnav__step', ms: 1, note: 'x'.repeat(40) } as never);
    await vi.waitFor(() => expect(existsSync(join(dir, 'episodes', 'ep0003', 'log.jsonl'))).toBe(true));
    await big.finish(record(3, true));
    const lines = (await readFile(join(dir, 'episodes', 'ep0003', 'log.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).step)).toEqual(Array.from({ length: 1200 }, (_, i) => i));
  });
});
