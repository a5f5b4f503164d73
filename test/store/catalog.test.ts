/**
 * The lowdb run catalog: an index rebuilt from the run dirs when db.json is missing or
 * corrupt, listing newest first, calibration samples, coalesced writes.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunCatalog, catalogRunFromSummary, compareRunIds, type CatalogRun } from '../../src/store/catalog.js';
import { createRunDir, touchDone, writeSpec, writeSummary } from '../../src/store/run-dir.js';
import type { RunSpec, RunSummary } from '../../src/store/types.js';
import { runSpecSchema } from '../../src/spec/run-spec.js';
import type { RunStatus } from '../../src/statuses.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function outputs(): string {
  const d = mkdtempSync(join(tmpdir(), 'catalog-test-'));
  dirs.push(d);
  return d;
}

class Log {
  lines: string[] = [];
  info = (m: string) => void this.lines.push(`info ${m}`);
  warn = (m: string) => void this.lines.push(`warn ${m}`);
}

/** Writes a run dir the way the scheduler and eval process leave it. */
async function writeRun(
  out: string,
  at: Date,
  status: RunStatus,
  extra: Partial<RunSummary> = {},
  peakRssMb?: number,
): Promise<RunSummary> {
  const { runId, dir } = createRunDir(out, at);
  const spec: RunSpec = runSpecSchema.parse({
    runId,
    graphName: extra.graphName ?? 'gridnav_planner',
    episodeCount: 4,
    workerCount: extra.workerCount ?? 2,
    createdAt: at.toISOString(),
  });
  await writeSpec(dir, spec);
  const summary: RunSummary = {
    seq: 3,
    runId,
    status,
    graphName: spec.graphName,
    episodeCount: 4,
    workerCount: spec.workerCount,
    seed: 0,
    priority: 0,
    episodesDone: status === 'QUEUED' ? 0 : 4,
    createdAt: spec.createdAt,
    startedAt: null,
    finishedAt: null,
    error: null,
    aggregateMetrics: [{ name: 'success', mean: 0.5, count: 4, stderr: 0.25, min: 0, max: 1 }],
    aggregateByTask: {},
    statusCounts: status === 'QUEUED' ? {} : { COMPLETED: 4 },
    timedOut: false,
    episodes: [],
    ...extra,
  };
  await writeSummary(dir, summary);
  if (status !== 'QUEUED' && status !== 'RUNNING') await touchDone(dir);
  if (peakRssMb !== undefined)
    writeFileSync(join(dir, 'process.json'), JSON.stringify({ pid: 1, startedAt: spec.createdAt, command: [], peakRssMb }));
  return summary;
}

describe('RunCatalog', () => {
  it('rebuilds db.json from the run dirs when it is deleted, and says so in its log', async () => {
    const out = outputs();
    const a = await writeRun(out, new Date(2026, 10, 30, 10, 0, 0), 'COMPLETED', {}, 420);
    const b = await writeRun(out, new Date(2026, 10, 30, 10, 5, 0), 'CANCELLED');
    const c = await writeRun(out, new Date(2026, 10, 30, 10, 5, 0), 'QUEUED');
    const first = await RunCatalog.open(out);
    await first.close();
    expect(existsSync(join(out, 'db.json'))).toBe(true);
    unlinkSync(join(out, 'db.json'));

    const log = new Log();
    const cat = await RunCatalog.open(out, log);
    expect(log.lines.join('\n')).toMatch(/db\.json is missing; rebuilt from the run directories \(3 runs\)/);
    expect(cat.listRuns().map((r) => r.id)).toEqual([c.runId, b.runId, a.runId]);
    expect(cat.getRun(a.runId)).toMatchObject({
      status: 'COMPLETED',
      episodesDone: 4,
      statusCounts: { COMPLETED: 4 },
      viaSubprocess: true,
    });
    expect(cat.calibratedPeak('gridnav_planner', 2)).toBe(420);
    expect(JSON.parse(readFileSync(join(out, 'db.json'), 'utf8')).runs[b.runId].status).toBe('CANCELLED');
    await cat.close();
  });

  it('rebuilds a corrupt db.json, keeping the bad file aside', async () => {
    const out = outputs();
    const a = await writeRun(out, new Date(2026, 10, 30, 11, 0, 0), 'FAILED', { error: { code: 'OUT_OF_BUDGET', message: 'too big' } });
    writeFileSync(join(out, 'db.json'), '{"version": 1, "runs": {');
    const log = new Log();
    const cat = await RunCatalog.open(out, log);
    expect(log.lines.join('\n')).toMatch(/db\.json is corrupt .*rebuilt from the run directories \(1 runs\)/);
    expect(cat.getRun(a.runId)).toMatchObject({ status: 'FAILED', error: { code: 'OUT_OF_BUDGET' } });
    expect(readdirSync(out).some((f) => f.startsWith('db.json.corrupt-'))).toBe(true);
    await cat.close();

    // Valid JSON of the wrong shape counts as corrupt too.
    writeFileSync(join(out, 'db.json'), '[1, 2, 3]');
    const again = await RunCatalog.open(out, log);
    expect(again.getRun(a.runId)?.status).toBe('FAILED');
    await again.close();
  });

  it('picks up run dirs it missed and refreshes runs it still had as live', async () => {
    const out = outputs();
    const cat = await RunCatalog.open(out);
    const live = await writeRun(out, new Date(2026, 10, 30, 12, 0, 0), 'RUNNING');
    cat.upsertRun(catalogRunFromSummary(live));
    await cat.close();
    await writeSummary(join(out, 'eval_runs', live.runId), { ...live, seq: 9, status: 'COMPLETED' });
    const missed = await writeRun(out, new Date(2026, 10, 30, 12, 1, 0), 'COMPLETED');

    const reopened = await RunCatalog.open(out);
    expect(reopened.getRun(live.runId)?.status).toBe('COMPLETED');
    expect(reopened.getRun(missed.runId)?.status).toBe('COMPLETED');
    await reopened.close();
  });

  it('lists newest first, filtered by status and graph, paged', async () => {
    const out = outputs();
    const cat = await RunCatalog.open(out);
    const base: Omit<CatalogRun, 'id' | 'status' | 'createdAt'> = {
      graphName: 'g',
      priority: 0,
      startedAt: null,
      finishedAt: null,
      episodeCount: 1,
      episodesDone: 0,
      workerCount: 1,
      statusCounts: {},
      aggregateMetrics: [],
      error: null,
      pid: null,
      viaSubprocess: true,
    };
    cat.upsertRun({ ...base, id: '20261130_100000', status: 'COMPLETED', createdAt: '2026-11-30T10:00:00.000Z' });
    cat.upsertRun({ ...base, id: '20261130_100000_2', status: 'QUEUED', createdAt: '2026-11-30T10:00:00.500Z' });
    cat.upsertRun({ ...base, id: '20261130_100000_10', status: 'QUEUED', createdAt: '2026-11-30T10:00:00.500Z' });
    cat.upsertRun({ ...base, id: '20261130_110000', status: 'FAILED', createdAt: '2026-11-30T11:00:00.000Z', graphName: 'h' });
    expect(cat.listRuns().map((r) => r.id)).toEqual(['20261130_110000', '20261130_100000_10', '20261130_100000_2', '20261130_100000']);
    expect(cat.listRuns({ status: 'QUEUED' }).map((r) => r.id)).toEqual(['20261130_100000_10', '20261130_100000_2']);
    expect(cat.listRuns({ status: ['FAILED', 'COMPLETED'] }).map((r) => r.id)).toEqual(['20261130_110000', '20261130_100000']);
    expect(cat.listRuns({ graphName: 'h' }).map((r) => r.id)).toEqual(['20261130_110000']);
    expect(cat.listRuns({ offset: 1, first: 2 }).map((r) => r.id)).toEqual(['20261130_100000_10', '20261130_100000_2']);
    expect(cat.countRuns({ graphName: 'g' })).toBe(3);
    expect(compareRunIds('20261130_100000_2', '20261130_100000_10')).toBeLessThan(0);
    await cat.close();
  });

  it('keeps the last few calibration samples per graph and worker count and estimates with their peak', async () => {
    const out = outputs();
    const cat = await RunCatalog.open(out);
    expect(cat.calibratedPeak('g', 2)).toBeNull();
    for (const mb of [900, 300, 310, 320, 330, 340]) cat.recordCalibration('g', 2, mb);
    cat.recordCalibration('g', 4, 700);
    // 900 fell out of the window of five.
    expect(cat.calibratedPeak('g', 2)).toBe(340);
    expect(cat.calibratedPeak('g', 4)).toBe(700);
    await cat.close();
    const reopened = await RunCatalog.open(out);
    expect(reopened.calibratedPeak('g', 2)).toBe(340);
    await reopened.close();
  });

  it('keeps a GPU memory peak beside the RSS peak where one was measured, also across a reopen', async () => {
    const out = outputs();
    const cat = await RunCatalog.open(out);
    cat.recordCalibration('g', 1, 300);
    expect(cat.calibratedVramPeak('g', 1)).toBeNull();
    cat.recordCalibration('g', 1, 310, 2000);
    cat.recordCalibration('g', 1, 320, 0);
    expect(cat.calibratedVramPeak('g', 1)).toBe(2000);
    await cat.close();
    const reopened = await RunCatalog.open(out);
    expect(reopened.calibratedVramPeak('g', 1)).toBe(2000);
    await reopened.close();
  });

  it('writes a burst of updates through, the last value winning, once flushed', async () => {
    const out = outputs();
    const cat = await RunCatalog.open(out);
    await cat.flush();
    const base = catalogRunFromSummary(await writeRun(out, new Date(2026, 10, 30, 13, 0, 0), 'RUNNING'));
    for (let i = 0; i <= 500; i++) cat.upsertRun({ ...base, episodesDone: i });
    cat.updateSettings({ queueCapacity: 7 });
    await cat.flush();
    const disk = JSON.parse(readFileSync(join(out, 'db.json'), 'utf8'));
    expect(disk.runs[base.id].episodesDone).toBe(500);
    expect(disk.settings.queueCapacity).toBe(7);
    await cat.close();
    await cat.close();
  });

  it('follows the run dirs while open: a new run appears, a live one follows its summary, a deleted one goes, also on the next open', async () => {
    const out = outputs();
    const kept = await writeRun(out, new Date(2026, 10, 30, 9, 0, 0), 'COMPLETED');
    const cat = await RunCatalog.open(out);
    const live = await writeRun(out, new Date(2026, 10, 30, 10, 0, 0), 'RUNNING', { episodesDone: 1 });
    expect(cat.getRun(live.runId)).toBeUndefined();
    expect(await cat.syncRunDirs()).toBe(true);
    expect(cat.getRun(live.runId)).toMatchObject({ status: 'RUNNING', episodesDone: 1 });
    const dir = join(out, 'eval_runs', live.runId);
    await writeSummary(dir, { ...live, seq: 9, status: 'COMPLETED', episodesDone: 4 });
    await touchDone(dir);
    await cat.syncRunDirs();
    expect(cat.getRun(live.runId)).toMatchObject({ status: 'COMPLETED', episodesDone: 4 });
    // A run the scheduler owns is its to update, even with its dir gone.
    rmSync(dir, { recursive: true });
    await cat.syncRunDirs((id) => id === live.runId);
    expect(cat.getRun(live.runId)).toBeDefined();
    await cat.syncRunDirs();
    expect(cat.getRun(live.runId)).toBeUndefined();
    expect(cat.listRuns().map((r) => r.id)).toEqual([kept.runId]);
    await cat.close();
    // A dir deleted while no server ran is gone on the next open.
    rmSync(join(out, 'eval_runs', kept.runId), { recursive: true });
    const log = new Log();
    const again = await RunCatalog.open(out, log);
    expect(again.listRuns()).toEqual([]);
    expect(log.lines.join('\n')).toContain('1 run(s) whose directory is gone were removed');
    await again.close();
  });

  it("keeps a row its owner wrote while the sync was reading that run's files (a queued run cancelled meanwhile)", async () => {
    const out = outputs();
    const queued = await writeRun(out, new Date(2026, 10, 30, 11, 0, 0), 'QUEUED');
    const cat = await RunCatalog.open(out);
    const row = cat.upsertRun({ ...catalogRunFromSummary(queued), status: 'QUEUED' });
    // The run's summary changes on disk, then the scheduler lets go of the run and, once the sync
    // has looked, writes its CANCELLED row before the sync's reads come back.
    await writeSummary(join(out, 'eval_runs', queued.runId), { ...queued, seq: 2 });
    let checks = 0;
    const owned = (id: string): boolean => {
      if (id === queued.runId && ++checks === 2) cat.upsertRun({ ...row, status: 'CANCELLED' });
      return false;
    };
    await cat.syncRunDirs(owned);
    expect(checks).toBe(2);
    expect(cat.getRun(queued.runId)?.status).toBe('CANCELLED');
    await cat.close();
  });
});
