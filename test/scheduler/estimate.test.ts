/** The core estimate: declared per worker for replicated nodesets, else the measured figure. */
import { describe, expect, it } from 'vitest';
import { estimateRun, nodesetCosts, type NodesetCost } from '../../src/scheduler/admission/estimate.js';
import type { NodesetEntry } from '../../src/nodeset-registry/registry.js';

const env = (cores?: number): NodesetCost => ({
  name: 'env',
  parallelism: 'replicated',
  ...(cores !== undefined ? { resources: { cores } } : {}),
});
const shared: NodesetCost = { name: 'model', parallelism: 'shared', resources: { cores: 4 } };

describe('estimateRun cores', () => {
  it('counts each replicated nodeset per worker (default 1), shared ones not at all', () => {
    expect(estimateRun({ workerCount: 3, nodesets: [env(), shared], calibratedPeakMb: null })).toMatchObject({
      cores: 3,
      coresSource: 'declared',
    });
    expect(estimateRun({ workerCount: 4, nodesets: [env(0.25)], calibratedPeakMb: null }).cores).toBe(1);
    expect(estimateRun({ workerCount: 3, nodesets: [env(0.3)], calibratedPeakMb: null }).cores).toBe(0.9);
    // Only shared nodesets: the eval process's own thread.
    expect(estimateRun({ workerCount: 8, nodesets: [shared], calibratedPeakMb: null }).cores).toBe(1);
  });

  it("counts replicated nodesets served on the eval process's thread at most one core together", () => {
    const inline = (cores?: number): NodesetCost => ({ ...env(cores), name: 'light', inline: true });
    expect(estimateRun({ workerCount: 8, nodesets: [inline()], calibratedPeakMb: null }).cores).toBe(1);
    expect(estimateRun({ workerCount: 8, nodesets: [inline(0.1), env(0.5)], calibratedPeakMb: null }).cores).toBe(4.8);
    expect(estimateRun({ workerCount: 2, nodesets: [inline(0.25)], calibratedPeakMb: null }).cores).toBe(0.5);
  });

  it("counts a nodeset that computes on the eval process's thread (a heavyWith key set) per worker: it plays in lanes", () => {
    const manifest = { name: 'sim', parallelism: 'replicated', module: 'index.js', inProcess: true, functions: [] };
    const costs = nodesetCosts([
      { name: 'sim', dir: '', source: 'builtin', manifest },
      { name: 'heavy', dir: '', source: 'builtin', manifest: { ...manifest, name: 'heavy', heavyWith: ['work_ms'] } },
    ] as unknown as NodesetEntry[]);
    expect(costs.map((c) => c.inline)).toEqual([true, undefined]);
    expect(estimateRun({ workerCount: 4, nodesets: costs, calibratedPeakMb: null }).cores).toBe(5);
  });

  it('prefers what earlier runs measured, rounded up to a tenth', () => {
    expect(estimateRun({ workerCount: 8, nodesets: [env()], calibratedPeakMb: null, calibratedCores: 1.23 })).toMatchObject({
      cores: 1.3,
      coresSource: 'calibrated',
    });
  });
});

describe('estimateRun memory', () => {
  it("counts a nodeset's per-episode RAM (a sandbox's) once per worker, shared or replicated", () => {
    const sandbox: NodesetCost = { name: 'sandbox', parallelism: 'shared', resources: { ramMb: 120, episodeRamMb: 64 } };
    expect(estimateRun({ workerCount: 8, nodesets: [sandbox], calibratedPeakMb: null })).toMatchObject({
      ramMb: 120 + 8 * 64,
      source: 'declared',
    });
    expect(estimateRun({ workerCount: 2, nodesets: [sandbox, env()], calibratedPeakMb: null }).ramMb).toBe(120 + 2 * 64 + 2 * 80);
    expect(estimateRun({ workerCount: 8, nodesets: [sandbox], calibratedPeakMb: 300 }).ramMb).toBe(300);
  });
});
