/**
 * GPU memory in a container: no lspci, only nvidia-smi (a stand-in on PATH whose readings the
 * test rewrites). VRAM is measured, a run that needs more than is free waits saying so and
 * starts once it is freed, and a run's own GPU memory calibrates the next estimate.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readProcessRecord } from '../../src/store/catalog.js';
import { ResourceSampler } from '../../src/scheduler/admission/resource-sampler.js';
import { fakeNvidiaSmi, type FakeNvidiaSmi } from '../fixtures/fake-nvidia-smi.js';
import { closeAll, makeScheduler, slow, waitFor, waitForStatus } from './harness.js';

const H200 = (usedMb: number) => `0, GPU-5c1a7e2b-0000-4c2d-9d1e-000000000000, NVIDIA H200, 143771, ${usedMb}, ${143771 - usedMb}`;

let smi: FakeNvidiaSmi;
let savedPath: string | undefined;

beforeEach(() => {
  smi = fakeNvidiaSmi();
  savedPath = process.env.PATH;
  process.env.PATH = smi.path();
});

afterEach(async () => {
  await closeAll();
  process.env.PATH = savedPath;
  smi.remove();
});

describe('VRAM admission with nvidia-smi and no lspci', () => {
  it('measures VRAM, holds back a run that needs more than is free with a reason naming VRAM, and starts it once freed', async () => {
    // Another process holds 100 GB of the 140 GB.
    smi.setGpus([H200(100_000)]);
    const h = await makeScheduler();
    const res = h.scheduler.resources();
    expect(res).toMatchObject({ vramMeasured: true, vramTotalMb: 143771, vramFreeMb: 43771 });
    expect(res.gpus).toEqual([
      { index: 0, uuid: 'GPU-5c1a7e2b-0000-4c2d-9d1e-000000000000', name: 'NVIDIA H200', totalMb: 143771, usedMb: 100_000, freeMb: 43771 },
    ]);

    const run = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1, marginalVramMb: 60 * 1024 });
    await h.scheduler.tick();
    const [waiting] = h.scheduler.queue();
    expect(waiting).toMatchObject({ runId: run.runId, waitingReason: 'needs 60.0 GB VRAM, 42.7 GB free after reservations' });
    expect(waiting!.estimate.vramMb).toBe(61440);
    expect(h.started).toEqual([]);

    // The other process lets go of its memory.
    smi.setGpus([H200(0)]);
    await waitForStatus(h, run.runId, 'RUNNING');
    expect(h.scheduler.resources().vramFreeMb).toBe(143771);
    await waitForStatus(h, run.runId, 'COMPLETED');
  });

  it("reads each run's own GPU memory from nvidia-smi's compute processes and calibrates the next estimate with it", async () => {
    smi.setGpus([H200(0), '1, GPU-second, NVIDIA H200, 143771, 0, 143771']);
    const h = await makeScheduler({ sampler: new ResourceSampler({ vramRefreshMs: 100 }), rssSampleIntervalMs: 100 });
    // Any eval process started under this test's outputs folder holds 3000 MB.
    smi.setApps([{ match: ['eval-process/main.js', h.dir], mb: 3000 }]);
    expect(h.scheduler.resources()).toMatchObject({ vramTotalMb: 2 * 143771, vramFreeMb: 2 * 143771 });

    const run = await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 2, overrides: slow(20) });
    expect(run.status).toBe('QUEUED');
    await waitFor('the run to show its GPU memory', () => h.scheduler.activeJobs().find((j) => j.runId === run.runId && j.vramMb === 3000));
    await waitForStatus(h, run.runId, 'COMPLETED');
    expect((await readProcessRecord(h.scheduler.getRunDir(run.runId)))?.peakVramMb).toBe(3000);
    expect(h.scheduler.catalog.calibratedVramPeak('gridnav_planner', 1)).toBe(3000);

    h.scheduler.acquireInteractiveLock('inspect');
    await h.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1, marginalVramMb: 500 });
    expect(h.scheduler.queue()[0]!.estimate).toMatchObject({ vramMb: 3000, source: 'calibrated' });
  });

  it('falls back to the static ledger when nvidia-smi cannot reach the driver', async () => {
    smi.setMode('fail');
    const h = await makeScheduler({ staticCapacity: { vramMb: 1000 } });
    expect(h.scheduler.resources()).toMatchObject({ vramMeasured: false, vramTotalMb: 1000, vramFreeMb: 1000, gpus: [] });
  });
});
