/**
 * Storage faults under a running server: outputs that turn read-only or fill up, and a run
 * directory deleted while its run runs. Root ignores file modes and CI may not mount file
 * systems, so a full or read-only disk is made with the fault switch of the file layer
 * (EVAL_INJECT_FS_FAULT, read by this process and by the eval processes it starts); a deleted
 * directory is really deleted.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../src/app.js';
import { DIST_DIR } from '../src/paths.js';
import { readSummary, runDirPath, runsRoot } from '../src/store/run-dir.js';
import { codeOf, gql, PROGRESS, START_EVAL, startServer, waitFor, wsCollect, type GqlResult, type TestServer } from './app.helpers.js';

const controlDir = mkdtempSync(join(tmpdir(), 'fs-fault-'));
const control = join(controlDir, 'fault');
process.env.EVAL_INJECT_FS_FAULT = control;

let server: TestServer | undefined;
const extraApps: App[] = [];

afterEach(async () => {
  rmSync(control, { force: true });
  for (const app of extraApps.splice(0)) await app.stop({ cancelRunning: true });
  await server?.stop();
  server = undefined;
});

afterAll(() => rmSync(controlDir, { recursive: true, force: true }));

const RUN = `query Run($id: ID!) { run(id: $id) { id status pid episodesDone error { code message } } }`;
const RUNS = `{ runs { total items { id status error { code } } } }`;
const CANCEL = `mutation Cancel($id: ID!) { cancelRun(id: $id) { id status } }`;

const outputsOf = (s: TestServer) => join(s.dir, 'outputs');

/** A run long enough to be running when the fault comes: 40 gridnav episodes at 20 ms a step. */
async function startLongRun(s: TestServer): Promise<string> {
  const r = await s.gql(START_EVAL, {
    input: { graphName: 'gridnav_planner', episodeCount: 40, overrides: { env: { step_latency_ms: 20 } } },
  });
  expect(r.errors).toBeUndefined();
  const runId = r.data!.startEval.runId as string;
  await waitFor(
    'the run to finish an episode',
    async () => {
      const run = (await s.gql(RUN, { id: runId })).data?.run;
      return run?.status === 'RUNNING' && run.episodesDone >= 1;
    },
    60_000,
  );
  return runId;
}

async function runOf(
  s: TestServer,
  id: string,
): Promise<{ status: string; pid: number | null; episodesDone: number; error: { code: string; message: string } | null }> {
  const r = await s.gql(RUN, { id });
  expect(r.errors).toBeUndefined();
  return r.data!.run;
}

describe('storage faults', () => {
  it.each([
    ['EROFS', 'STORAGE_READ_ONLY'],
    ['ENOSPC', 'STORAGE_FULL'],
  ])('outputs that turn %s: the run ends FAILED %s within seconds, its subscription ends, nothing is left RUNNING', async (errno, code) => {
    server = await startServer();
    const s = server;
    const runId = await startLongRun(s);
    const progress = wsCollect(s.ws(), PROGRESS, { id: runId });
    await waitFor('the subscription to answer', async () => (await s.gql(RUN, { id: runId })).data?.run, 5000);

    const t0 = Date.now();
    writeFileSync(control, `${errno} ${outputsOf(s)}`);
    const ended = await waitFor(
      'the run to end',
      async () => {
        const run = await runOf(s, runId);
        return run.status !== 'RUNNING' && run;
      },
      30_000,
    );
    const seconds = (Date.now() - t0) / 1000;
    expect(ended).toMatchObject({ status: 'FAILED', pid: null, error: { code } });
    expect(seconds).toBeLessThan(15);

    // Its subscription gets the end and completes; the catalog agrees; cancelling is a clear CONFLICT.
    const payloads = (await progress) as Array<GqlResult>;
    expect(payloads.at(-1)!.data!.runProgress).toMatchObject({ status: 'FAILED' });
    const runs = (await s.gql(RUNS)).data!.runs;
    expect(runs.items.find((r: { id: string }) => r.id === runId)).toMatchObject({ status: 'FAILED', error: { code } });
    const cancel = await s.gql(CANCEL, { id: runId });
    expect(codeOf(cancel)).toBe('CONFLICT');
    expect(cancel.errors![0]!.message).toContain('FAILED');

    // A new run on the same disk is refused with the code, leaving no half-made run dir.
    const before = readdirSync(runsRoot(outputsOf(s))).sort();
    const refused = await s.gql(START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 1 } });
    expect(codeOf(refused)).toBe(code);
    expect(readdirSync(runsRoot(outputsOf(s))).sort()).toEqual(before);

    // Once the disk takes writes again, the end reaches summary.json and _DONE; the episodes on disk are kept.
    rmSync(control);
    const dir = runDirPath(outputsOf(s), runId);
    await waitFor('the final summary on disk', () => existsSync(join(dir, '_DONE')), 10_000);
    const onDisk = await readSummary(dir);
    expect(onDisk).toMatchObject({ status: 'FAILED', error: { code } });
    expect(onDisk.episodesDone).toBeGreaterThanOrEqual(ended.episodesDone);
    expect(onDisk.episodesDone).toBeGreaterThanOrEqual(1);
    expect((await s.gql('{ graphs { name } }')).errors).toBeUndefined();
  });

  it('a run dir deleted while its run runs: FAILED RUN_DIR_MISSING within seconds, then gone after a restart', async () => {
    server = await startServer();
    const s = server;
    const runId = await startLongRun(s);
    const progress = wsCollect(s.ws(), PROGRESS, { id: runId });
    await waitFor('the subscription to answer', async () => (await s.gql(RUN, { id: runId })).data?.run, 5000);

    const t0 = Date.now();
    rmSync(runDirPath(outputsOf(s), runId), { recursive: true, force: true });
    const ended = await waitFor(
      'the run to end',
      async () => {
        const run = await runOf(s, runId);
        return run.status !== 'RUNNING' && run;
      },
      30_000,
    );
    expect(ended).toMatchObject({ status: 'FAILED', pid: null, error: { code: 'RUN_DIR_MISSING' } });
    expect((Date.now() - t0) / 1000).toBeLessThan(10);
    expect((await progress).at(-1)!.data!.runProgress).toMatchObject({ status: 'FAILED' });
    expect(codeOf(await s.gql(CANCEL, { id: runId }))).toBe('CONFLICT');

    // After a restart on the same outputs, the deleted run is no more.
    await s.app.stop({ cancelRunning: true });
    const again = buildApp({
      outputsDir: outputsOf(s),
      logger: { info: () => {}, warn: () => {}, error: () => {} },
      webDir: join(s.dir, 'no-web'),
    });
    extraApps.push(again);
    const { url } = await again.start(0);
    const runs = (await gql(url, RUNS)).data!.runs;
    expect(runs.items.map((r: { id: string }) => r.id)).not.toContain(runId);
    expect(codeOf(await gql(url, RUN, { id: runId }))).toBe('NOT_FOUND');
  });

  it('a finished run whose dir is deleted leaves the list while the server runs', async () => {
    server = await startServer();
    const s = server;
    const r = await s.gql(START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 1 } });
    const runId = r.data!.startEval.runId as string;
    await waitFor(
      'the run to complete',
      async () =>
        (await s.gql(RUNS)).data!.runs.items.some((x: { id: string; status: string }) => x.id === runId && x.status === 'COMPLETED'),
      60_000,
    );
    rmSync(runDirPath(outputsOf(s), runId), { recursive: true, force: true });
    await waitFor(
      'the run to leave the list',
      async () => {
        const runs = (await s.gql(RUNS)).data!.runs;
        return runs.total === 0 && runs.items.length === 0;
      },
      5000,
    );
    expect(codeOf(await s.gql(RUN, { id: runId }))).toBe('NOT_FOUND');
  });

  it('a queued run whose dir is deleted fails within a tick with RUN_DIR_MISSING, in the API and the catalog', async () => {
    server = await startServer();
    const s = server;
    const release = s.app.scheduler.acquireInteractiveLock('test: hold admission');
    let runId: string;
    let ended: Awaited<ReturnType<typeof runOf>>;
    let tookMs: number;
    try {
      const r = await s.gql(START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 1 } });
      runId = r.data!.startEval.runId as string;
      expect(r.data!.startEval.status).toBe('QUEUED');
      const t0 = Date.now();
      rmSync(runDirPath(outputsOf(s), runId), { recursive: true, force: true });
      ended = await waitFor(
        'the queued run to fail',
        async () => {
          const run = await runOf(s, runId);
          return run.status !== 'QUEUED' && run;
        },
        5000,
        20,
      );
      tookMs = Date.now() - t0;
    } finally {
      release();
    }
    // The test server ticks every 200 ms: within a tick, not when it would have been admitted.
    expect(tookMs).toBeLessThan(1500);
    expect(ended).toMatchObject({ status: 'FAILED', error: { code: 'RUN_DIR_MISSING' } });
    expect(ended.error!.message).toMatch(/run directory .* was deleted while the run was queued/);
    expect(ended.error!.message).not.toMatch(/ENOENT/);
    const listed = (await s.gql(RUNS)).data!.runs.items.find((x: { id: string }) => x.id === runId);
    expect(listed).toMatchObject({ status: 'FAILED', error: { code: 'RUN_DIR_MISSING' } });
    expect((await s.gql(`{ queue { run { id } } }`)).data!.queue).toEqual([]);
    expect(codeOf(await s.gql(CANCEL, { id: runId }))).toBe('CONFLICT');
  });

  it('restarting while the outputs are still read-only ends a dead run FAILED STORAGE_READ_ONLY, not ABORTED, and the server starts', async () => {
    server = await startServer();
    const s = server;
    const runId = await startLongRun(s);
    writeFileSync(control, `EROFS ${outputsOf(s)}`);
    await waitFor('the run to end', async () => (await runOf(s, runId)).status !== 'RUNNING', 30_000);
    await s.app.stop({ cancelRunning: true });

    const again = buildApp({
      outputsDir: outputsOf(s),
      logger: { info: () => {}, warn: () => {}, error: () => {} },
      webDir: join(s.dir, 'no-web'),
    });
    extraApps.push(again);
    const { url } = await again.start(0);
    const run = (await gql(url, RUN, { id: runId })).data!.run;
    expect(run).toMatchObject({ status: 'FAILED', error: { code: 'STORAGE_READ_ONLY' } });
    expect((await gql(url, RUNS)).data!.runs.items.find((x: { id: string }) => x.id === runId)).toMatchObject({ status: 'FAILED' });
  });
});

describe('runs written by another process', () => {
  it("a run `evalctl run` writes into the server's outputs appears in `runs` within 2 s", async () => {
    server = await startServer();
    const s = server;
    const cli = execa(
      process.execPath,
      [join(DIST_DIR, 'main.js'), 'run', 'gridnav_planner', '--episodes', '2', '--outputs', outputsOf(s), '--json'],
      {
        reject: false,
        env: { ACTIVE_WORKSPACE_DIR: '' },
      },
    );
    try {
      const root = runsRoot(outputsOf(s));
      const runId = await waitFor(
        'evalctl run to make its run dir',
        () => existsSync(root) && readdirSync(root).find((n) => existsSync(join(root, n, 'summary.json'))),
        30_000,
      );
      const t0 = Date.now();
      await waitFor(
        'the run in `runs`',
        async () => (await s.gql(RUNS)).data!.runs.items.some((r: { id: string }) => r.id === runId),
        5000,
        20,
      );
      expect(Date.now() - t0).toBeLessThan(2000);
      const done = await cli;
      expect(done.exitCode).toBe(0);
      await waitFor(
        'its final state in `runs`',
        async () =>
          (await s.gql(RUNS)).data!.runs.items.find((r: { id: string; status: string }) => r.id === runId && r.status === 'COMPLETED'),
        5000,
      );
    } finally {
      cli.kill('SIGKILL');
      await cli.catch(() => {});
    }
  });
});
