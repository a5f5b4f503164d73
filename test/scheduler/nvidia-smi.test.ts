/** Reading nvidia-smi: its CSV, a stand-in that hangs or fails, and GPU memory per process tree. */
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseComputeAppsCsv, parseGpuCsv, queryGpus } from '../../src/scheduler/admission/nvidia-smi.js';
import { processTreesVramMb, ResourceSampler } from '../../src/scheduler/admission/resource-sampler.js';
import { fakeNvidiaSmi, type FakeNvidiaSmi } from '../fixtures/fake-nvidia-smi.js';

describe('nvidia-smi CSV', () => {
  it('reads each GPU, keeps a name with a comma whole, and leaves out a GPU whose memory is [N/A]', () => {
    const gpus = parseGpuCsv(
      [
        '0, GPU-a, NVIDIA H200, 143771, 100000, 43771',
        '1, GPU-b, NVIDIA A100-SXM4-80GB, rev 2, 81920, 0, 81920',
        '2, GPU-c, NVIDIA T4, [N/A], [N/A], [N/A]',
        '',
      ].join('\n'),
    );
    expect(gpus).toEqual([
      { index: 0, uuid: 'GPU-a', name: 'NVIDIA H200', totalMb: 143771, usedMb: 100000, freeMb: 43771 },
      { index: 1, uuid: 'GPU-b', name: 'NVIDIA A100-SXM4-80GB, rev 2', totalMb: 81920, usedMb: 0, freeMb: 81920 },
    ]);
  });

  it('sums a process over the GPUs it uses and skips [N/A] figures', () => {
    expect(parseComputeAppsCsv('101, 2048\n202, [N/A]\n101, 1024\nNo running processes found\n')).toEqual(new Map([[101, 3072]]));
  });
});

describe('nvidia-smi on PATH', () => {
  let smi: FakeNvidiaSmi;
  let savedPath: string | undefined;
  beforeEach(() => {
    smi = fakeNvidiaSmi();
    savedPath = process.env.PATH;
    process.env.PATH = smi.path();
  });
  afterEach(() => {
    process.env.PATH = savedPath;
    smi.remove();
  });

  it('sums the GPUs and refreshes the reading in the background', async () => {
    smi.setGpus(['0, GPU-a, NVIDIA H200, 1000, 400, 600', '1, GPU-b, NVIDIA H200, 1000, 0, 1000']);
    const sampler = new ResourceSampler({ vramRefreshMs: 0 });
    try {
      expect(await sampler.sample()).toMatchObject({ vramTotalMb: 2000, vramFreeMb: 1600 });
      smi.setGpus(['0, GPU-a, NVIDIA H200, 1000, 1000, 0', '1, GPU-b, NVIDIA H200, 1000, 0, 1000']);
      for (;;) {
        const s = await sampler.sample();
        if (s.vramFreeMb === 1000) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      sampler.close();
    }
  });

  it('gives up on an nvidia-smi that never answers by its deadline, and counts VRAM as unmeasured', async () => {
    smi.setMode('hang');
    const t0 = Date.now();
    expect(await queryGpus({ timeoutMs: 300 })).toBeNull();
    expect(Date.now() - t0).toBeLessThan(5000);
    const sampler = new ResourceSampler({ nvidiaSmiTimeoutMs: 300 });
    expect(await sampler.sample()).toMatchObject({ vramTotalMb: null, vramFreeMb: null, gpus: [] });
    sampler.close();
  });

  it('stops a query in flight when its signal aborts', async () => {
    smi.setMode('hang');
    const ac = new AbortController();
    const q = queryGpus({ timeoutMs: 60_000, signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    expect(await q).toBeNull();
  });
});

describe('GPU memory of a process tree', () => {
  it("adds up what nvidia-smi lists for a root's descendants, and nothing of other processes", async () => {
    // A child that starts a grandchild and prints its pid; its own process group, so cleanup takes both.
    const script =
      "const g = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); console.log(g.pid); setInterval(() => {}, 1000)";
    const child = execa(process.execPath, ['-e', script], { reject: false, detached: true, buffer: false });
    try {
      const grandchild = await new Promise<number>((resolve) =>
        child.stdout!.once('data', (b: Buffer) => resolve(Number(b.toString().trim()))),
      );
      const used = new Map([
        [child.pid!, 100],
        [grandchild, 250],
        [process.pid, 9999],
      ]);
      expect(await processTreesVramMb([child.pid!, 999_999_999], used)).toEqual(
        new Map([
          [child.pid!, 350],
          [999_999_999, 0],
        ]),
      );
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
      await child;
    }
  });
});
