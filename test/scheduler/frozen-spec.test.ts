/**
 * A queued run is frozen at submit: editing its graph file while it waits (the interactive
 * lock holds admission), or across a restart of the backend, changes nothing it evaluates.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyOverrides } from '../../src/graph/graph.js';
import type { GraphSpec } from '../../src/core/types.js';
import { readSpec } from '../../src/store/run-dir.js';
import { gridnavGraph, writeWorkspaceGraph } from '../eval-process/run-helpers.js';
import { FixedSampler } from '../fixtures/fixed-sampler.js';
import { closeAll, makeScheduler, waitForStatus } from './harness.js';

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const tempDir = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

/** The graph as submitted, and as edited afterwards: another budget, and the env told to fail every episode at once. */
function graphs(): { submitted: GraphSpec; edited: GraphSpec } {
  const submitted = gridnavGraph('frozen_nav', { stepBudget: 300 });
  const edited = gridnavGraph('frozen_nav', { stepBudget: 40, envConfig: { fail_at_step: 0 } });
  return { submitted, edited };
}

const overrides = { agent: { epsilon: 0 } };
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));

describe('a queued run is frozen at submit', () => {
  it('evaluates the graph as submitted although its file was edited while it waited', async () => {
    const workspace = tempDir('frozen-ws-');
    const { submitted, edited } = graphs();
    await writeWorkspaceGraph(workspace, submitted);
    const h = await makeScheduler({ sampler: new FixedSampler(), workspaceDir: workspace });
    const release = h.scheduler.acquireInteractiveLock('test: hold the run in the queue');
    const queued = await h.scheduler.submit({ graphName: 'frozen_nav', episodeCount: 2, overrides });
    expect(queued.status).toBe('QUEUED');
    const dir = h.scheduler.getRunDir(queued.runId);
    const frozen = applyOverrides(submitted, overrides);

    await writeWorkspaceGraph(workspace, edited);
    release();
    const final = await waitForStatus(h, queued.runId, ['COMPLETED', 'FAILED']);

    expect(final.status).toBe('COMPLETED');
    expect(readJson(join(dir, 'graph.json'))).toEqual(frozen);
    expect(final.episodes.map((e) => e.status)).toEqual(['COMPLETED', 'COMPLETED']);
    expect((await readSpec(dir)).graph).toEqual(frozen);
  });

  it('stays frozen when the backend restarts while it is queued', async () => {
    const workspace = tempDir('frozen-ws-');
    const outputs = tempDir('frozen-out-');
    const { submitted, edited } = graphs();
    await writeWorkspaceGraph(workspace, submitted);
    const first = await makeScheduler({ sampler: new FixedSampler(), workspaceDir: workspace }, outputs, (s) =>
      s.acquireInteractiveLock('test: hold'),
    );
    const queued = await first.scheduler.submit({ graphName: 'frozen_nav', episodeCount: 1, overrides });
    await first.scheduler.close();

    await writeWorkspaceGraph(workspace, edited);
    const second = await makeScheduler({ sampler: new FixedSampler(), workspaceDir: workspace }, outputs);
    const final = await waitForStatus(second, queued.runId, ['COMPLETED', 'FAILED']);
    expect(final.status).toBe('COMPLETED');
    expect(final.episodes.map((e) => e.status)).toEqual(['COMPLETED']);
    expect(readJson(join(second.scheduler.getRunDir(queued.runId), 'graph.json'))).toEqual(applyOverrides(submitted, overrides));
  });
});
