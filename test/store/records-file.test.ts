import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  appendRecords,
  readAllRecords,
  readRecord,
  readRecords,
  readRecordsPage,
  recordsIndex,
  replaceRecords,
  tailRecords,
} from '../../src/store/records-file.js';
import { initialSummary } from '../../src/eval-process/summary-writer.js';
import { readSummary, writeSummary } from '../../src/store/run-dir.js';
import { runSpecSchema } from '../../src/spec/run-spec.js';
import type { EpisodeRecord } from '../../src/store/types.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'records-file-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const record = (index: number, success: boolean, note = ''): EpisodeRecord => ({
  index,
  episodeId: `g/${index}`,
  status: 'COMPLETED',
  steps: 2,
  metrics: { success },
  seed: index,
  workerId: 0,
  durationMs: 5,
  startedAt: '',
  finishedAt: '',
  stepBudget: 10,
  assets: [],
  // A multi-byte text: offsets are bytes, not characters.
  ...(note ? { instruction: note } : {}),
});

const indices = (records: readonly EpisodeRecord[]) => records.map((r) => r.index);

describe('records.jsonl', () => {
  it('reads in index order, pages and finds one record through its index; a later line of an index wins', async () => {
    // Arrival order, with episode 2 played again (its later record says success: false).
    await appendRecords(dir, [record(3, true), record(0, true, 'géographie → 北'), record(2, true), record(1, true)]);
    await appendRecords(dir, [record(2, false), record(4, true)]);
    expect(indices(await readAllRecords(dir))).toEqual([0, 1, 2, 3, 4]);
    expect((await readRecord(dir, 2))?.metrics.success).toBe(false);
    expect((await readRecord(dir, 0))?.instruction).toBe('géographie → 北');
    expect(await readRecord(dir, 9)).toBeNull();
    const page = await readRecordsPage(dir, 1, 2);
    expect(page && { items: indices(page.items), total: page.total }).toEqual({ items: [1, 2], total: 5 });
    await appendRecords(dir, [{ ...record(3, false), status: 'CRASHED' }]);
    const crashed = await readRecordsPage(dir, 0, 10, 'CRASHED');
    expect(crashed && { items: indices(crashed.items), total: crashed.total }).toEqual({ items: [3], total: 1 });
    const streamed: number[] = [];
    for await (const r of readRecords(dir)) streamed.push(r.index);
    expect(streamed).toEqual([0, 1, 2, 3, 4]);
  });

  it('indexes only what was appended since the last read, and starts over for a file replaced or cut', async () => {
    await appendRecords(dir, [record(0, true), record(1, true)]);
    const first = await recordsIndex(dir);
    expect(first?.indices).toEqual([0, 1]);
    // A line being written (no newline yet) is not a record until it is whole.
    const path = join(dir, 'records.jsonl');
    const line = JSON.stringify(record(2, true));
    await appendFile(path, line.slice(0, 20));
    expect((await recordsIndex(dir))?.indices).toEqual([0, 1]);
    await appendFile(path, `${line.slice(20)}\n`);
    expect((await recordsIndex(dir))?.indices).toEqual([0, 1, 2]);
    await replaceRecords(dir, [record(5, false)]);
    expect(indices(await readAllRecords(dir))).toEqual([5]);
  });

  it('a line torn by a crash is cut before the next append, and lines that are not records are left out', async () => {
    const path = join(dir, 'records.jsonl');
    await writeFile(
      path,
      `${JSON.stringify(record(0, true))}\nnot json\n{"index":1,"episodeId":"g/1"}\n${JSON.stringify(record(2, true)).slice(0, 30)}`,
    );
    await appendRecords(dir, [record(3, true)]);
    const text = await readFile(path, 'utf8');
    expect(text.endsWith(`${JSON.stringify(record(3, true))}\n`)).toBe(true);
    expect(text).not.toContain(JSON.stringify(record(2, true)).slice(0, 30));
    expect(indices(await readAllRecords(dir))).toEqual([0, 3]);
  });

  it('tails from an offset, whole lines only, and says when the file was replaced', async () => {
    expect(await tailRecords(dir, 0)).toBeNull();
    await appendRecords(dir, [record(1, true), record(0, true)]);
    const a = await tailRecords(dir, 0);
    expect(a && indices(a.records)).toEqual([1, 0]);
    const line = JSON.stringify(record(2, true));
    await appendFile(join(dir, 'records.jsonl'), line.slice(0, 10));
    const b = await tailRecords(dir, a!.next, a!.ino);
    expect(b && { records: b.records.length, next: b.next, restart: b.restart }).toEqual({ records: 0, next: a!.next, restart: false });
    await appendFile(join(dir, 'records.jsonl'), `${line.slice(10)}\n`);
    const c = await tailRecords(dir, b!.next, b!.ino);
    expect(c && indices(c.records)).toEqual([2]);
    await replaceRecords(dir, [record(7, true), record(8, true), record(9, true), record(6, true)]);
    const d = await tailRecords(dir, c!.next, c!.ino);
    expect(d && { records: indices(d.records), restart: d.restart }).toEqual({ records: [7, 8, 9, 6], restart: true });
  });

  it('summary.json holds no records; writing back a summary read from the run appends none, and old summaries with records still read', async () => {
    const spec = runSpecSchema.parse({
      runId: '20260101_000000',
      graphName: 'g',
      episodeCount: 3,
      workerCount: 1,
      createdAt: new Date(0).toISOString(),
    });
    const summary = { ...initialSummary(spec), episodes: [record(0, true), record(1, false)], episodesDone: 2 };
    await writeSummary(dir, summary);
    expect(JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'))).not.toHaveProperty('episodes');
    const read = await readSummary(dir);
    expect(indices(read.episodes)).toEqual([0, 1]);
    await writeSummary(dir, { ...read, seq: read.seq + 1 });
    expect((await readFile(join(dir, 'records.jsonl'), 'utf8')).trimEnd().split('\n')).toHaveLength(2);
    // A record the file lacks, and one that changed, are appended.
    await writeSummary(dir, { ...read, episodes: [record(0, true), record(1, true), record(2, true)], episodesDone: 3 });
    expect((await readFile(join(dir, 'records.jsonl'), 'utf8')).trimEnd().split('\n')).toHaveLength(4);
    expect((await readSummary(dir)).episodes.map((r) => r.metrics.success)).toEqual([true, true, true]);
    // A summary.json written before records.jsonl: its own records.
    const legacy = join(dir, 'legacy');
    await mkdir(legacy);
    await writeFile(join(legacy, 'summary.json'), JSON.stringify({ ...summary, episodes: [record(0, true)], episodesDone: 1 }, null, 2));
    expect(indices((await readSummary(legacy)).episodes)).toEqual([0]);
  });
});
