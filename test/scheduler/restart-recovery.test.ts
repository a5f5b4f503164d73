/**
 * Restart recovery: a backend SIGKILLed with runs queued and running; a run recorded RUNNING
 * whose process is gone; a live eval process adopted by a new scheduler.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { initialSummary } from '../../src/eval-process/summary-writer.js';
import { isTerminalRunStatus } from '../../src/statuses.js';
import { createRunDir, readSummary, writeSpec, writeSummary } from '../../src/store/run-dir.js';
import type { RunSpec, RunSummary } from '../../src/store/types.js';
import { runSpecSchema } from '../../src/spec/run-spec.js';
import type { GraphSpec } from '../../src/core/types.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { FixedSampler } from '../fixtures/fixed-sampler.js';
import { closeAll, makeScheduler, waitFor, waitForStatus, groupGone } from './harness.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'scheduler-backend.mjs');
const spawned: number[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const pid of spawned.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await closeAll();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('restart recovery', () => {
  it('after the backend is SIGKILLed, a new scheduler has the queued runs in order and nothing stuck RUNNING', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sched-restart-'));
    dirs.push(dir);
    const backend = spawn(process.execPath, [FIXTURE, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    spawned.push(backend.pid!);
    const ready = await new Promise<{ running: string; pid: number; queued: string[] }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the fixture backend did not get ready')), 45_000);
      createInterface({ input: backend.stdout! }).on('line', (line) => {
        if (!line.startsWith('READY ')) return;
        clearTimeout(timer);
        resolve(JSON.parse(line.slice(6)));
      });
      backend.once('exit', (code) => reject(new Error(`the fixture backend exited (${code})`)));
    });
    backend.kill('SIGKILL');
    await new Promise((r) => backend.once('exit', r));

    const h = await makeScheduler({ sampler: new FixedSampler({ ramFreeMb: 300 }) }, dir, (s) => s.acquireInteractiveLock('inspect'));
    const [q0, q5, q0b] = ready.queued as [string, string, string];
    expect(h.scheduler.queue().map((e) => [e.runId, e.priority])).toEqual([
      [q5, 5],
      [q0, 0],
      [q0b, 0],
    ]);
    for (const id of ready.queued) expect((await readSummary(h.scheduler.getRunDir(id))).status).toBe('QUEUED');

    // The run that was running ends (its eval process saw the backend go) and is not left RUNNING.
    await waitFor(
      'the old running run to be finalised',
      () => {
        const r = h.scheduler.catalog.getRun(ready.running);
        return r && isTerminalRunStatus(r.status) && h.scheduler.activeJobs().length === 0;
      },
      20_000,
    );
    expect(h.scheduler.catalog.listRuns({ status: 'RUNNING' })).toEqual([]);
    const old = await readSummary(h.scheduler.getRunDir(ready.running));
    // CANCELLED when it saw the backend go, FAILED when it never reached the dead backend's shared host, ABORTED when it died.
    expect(isTerminalRunStatus(old.status)).toBe(true);
    await waitFor('the old eval process group to be gone', () => groupGone(ready.pid), 10_000);

    // Fresh shared hosts: the queued runs point at them.
    const urls = JSON.parse(readFileSync(join(h.scheduler.getRunDir(q5), 'shared_urls.json'), 'utf8')) as Record<string, string>;
    expect(urls.planner).toBe(h.scheduler.sharedHosts().find((x) => x.nodeset === 'planner')?.url);
  });

  it('marks a run recorded RUNNING whose process is gone ABORTED, saying why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sched-restart-'));
    dirs.push(dir);
    const { runId, dir: runDir } = createRunDir(dir);
    const spec: RunSpec = runSpecSchema.parse({
      runId,
      graphName: 'gridnav_planner',
      episodeCount: 2,
      createdAt: new Date().toISOString(),
    });
    await writeSpec(runDir, spec);
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => dead.once('exit', r));
    const summary: RunSummary = { ...initialSummary(spec), seq: 4, status: 'RUNNING', startedAt: spec.createdAt, pid: dead.pid! };
    await writeSummary(runDir, summary);
    writeFileSync(join(runDir, 'process.json'), JSON.stringify({ pid: dead.pid, startedAt: spec.createdAt, command: [] }));

    const h = await makeScheduler({ sampler: new FixedSampler() }, dir);
    const after = await readSummary(runDir);
    expect(after).toMatchObject({
      status: 'ABORTED',
      seq: 5,
      error: { code: 'ABORTED', message: expect.stringContaining(`pid ${dead.pid}`) },
    });
    expect(after.finishedAt).not.toBeNull();
    expect(h.scheduler.catalog.getRun(runId)?.status).toBe('ABORTED');
    expect(h.scheduler.activeJobs()).toEqual([]);
  });

  it('queues again a run marked RUNNING whose eval process was never spawned', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sched-restart-'));
    dirs.push(dir);
    const { runId, dir: runDir } = createRunDir(dir);
    const spec: RunSpec = runSpecSchema.parse({
      runId,
      graphName: 'gridnav_planner',
      episodeCount: 1,
      createdAt: new Date().toISOString(),
    });
    await writeSpec(runDir, spec);
    await writeSummary(runDir, { ...initialSummary(spec), seq: 2, status: 'RUNNING', startedAt: spec.createdAt });
    const h = await makeScheduler({ sampler: new FixedSampler() }, dir, (s) => s.acquireInteractiveLock('inspect'));
    expect(h.scheduler.queue().map((e) => e.runId)).toEqual([runId]);
    expect(await readSummary(runDir)).toMatchObject({ status: 'QUEUED', seq: 3, startedAt: null });
  });

  it('a queued run offering python, recovered by a server without --allow-code-tools, ends FAILED with CODE_TOOLS_DISABLED', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sched-restart-'));
    dirs.push(dir);
    const { runId, dir: runDir } = createRunDir(dir);
    const graph = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'graphs', 'react_llm.json'), 'utf8')) as GraphSpec;
    for (const n of graph.nodes) if (n.id === 'tools') n.config = { builtins: ['calculator', 'python'] };
    const spec: RunSpec = runSpecSchema.parse({
      runId,
      graphName: 'react_llm',
      episodeCount: 1,
      createdAt: new Date().toISOString(),
      graph,
      codeTools: ['tools.python'],
    });
    await writeSpec(runDir, spec);
    await writeSummary(runDir, initialSummary(spec));
    const h = await makeScheduler({ sampler: new FixedSampler() }, dir, (s) => s.acquireInteractiveLock('inspect'));
    expect(h.scheduler.queue()).toEqual([]);
    expect(await readSummary(runDir)).toMatchObject({ status: 'FAILED', error: { code: 'CODE_TOOLS_DISABLED' } });
  });

  it('adopts an eval process that is still running and finalises it when it exits', async () => {
    const first = await makeScheduler({ sampler: new FixedSampler() });
    const run = await first.scheduler.submit({
      graphName: 'gridnav_planner',
      episodeCount: 3,
      overrides: { env: { step_latency_ms: 10 } },
    });
    await waitForStatus(first, run.runId, 'RUNNING');
    const pid = await waitFor('the pid', () => first.scheduler.activeJobs()[0]?.pid);
    await waitFor('an episode', () => first.scheduler.activeJobs()[0]?.episodesDone);
    await first.scheduler.close();

    const second = await makeScheduler({ sampler: new FixedSampler() }, first.dir);
    expect(second.scheduler.activeJobs()).toMatchObject([{ runId: run.runId, pid }]);
    // The first scheduler took its shared planner host down with it, so later episodes may crash; the run still ends.
    const final = await waitForStatus(second, run.runId, ['COMPLETED', 'FAILED', 'CANCELLED', 'ABORTED'], 45_000);
    expect(final.episodesDone).toBeGreaterThanOrEqual(1);
    expect(second.scheduler.activeJobs()).toEqual([]);
    expect(second.scheduler.catalog.getRun(run.runId)?.status).toBe(final.status);
  });

  it('rebuilds a deleted or corrupt db.json from the run dirs on start, and says so', async () => {
    const first = await makeScheduler({ sampler: new FixedSampler() }, undefined, (s) => s.acquireInteractiveLock('hold'));
    const a = await first.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1 });
    const b = await first.scheduler.submit({ graphName: 'gridnav_planner', episodeCount: 1, priority: 1 });
    await first.scheduler.cancel(a.runId);
    await first.scheduler.close();

    for (const damage of ['delete', 'corrupt'] as const) {
      if (damage === 'delete') rmSync(join(first.dir, 'db.json'));
      else writeFileSync(join(first.dir, 'db.json'), '{ not json');
      const next = await makeScheduler({ sampler: new FixedSampler() }, first.dir, (s) => s.acquireInteractiveLock('hold'));
      expect(next.logger.lines.join('\n')).toMatch(damage === 'delete' ? /db\.json is missing; rebuilt/ : /db\.json is corrupt .*rebuilt/);
      expect(next.scheduler.catalog.getRun(a.runId)?.status).toBe('CANCELLED');
      expect(next.scheduler.catalog.getRun(b.runId)).toMatchObject({ status: 'QUEUED', priority: 1 });
      expect(next.scheduler.queue().map((e) => e.runId)).toEqual([b.runId]);
      await next.scheduler.close();
    }
  });
});
