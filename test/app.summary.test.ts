/**
 * What the API makes of a summary.json it cannot trust: garbage or a file missing fields keeps
 * the last good state (no internal error, no run without episodes), and the states after it
 * still arrive, each with the server's own seq.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { computeAggregates } from '../src/store/aggregate.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { episodeDir, runsRoot, writeSummary } from '../src/store/run-dir.js';
import type { RunSummary } from '../src/store/types.js';
import { codeOf, PROGRESS, sseCollect, startServer, waitFor, wsCollect, type GqlResult, type TestServer } from './app.helpers.js';
import { writeSyntheticRun } from './e2e/synthetic-run.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

interface State {
  runProgress: { status: string; seq: number; episodesDone: number; episodes: { total: number } };
}

/** The first `done` episodes of a finished synthetic run, as its summary read while it was running. */
function runningAfter(full: RunSummary, done: number, status: RunSummary['status'] = 'RUNNING'): RunSummary {
  const episodes = full.episodes.slice(0, done);
  return {
    ...full,
    ...computeAggregates(episodes),
    status,
    finishedAt: status === 'RUNNING' ? null : full.finishedAt,
    episodes,
    episodesDone: done,
  };
}

describe('a summary.json that is not a valid summary', () => {
  it('keeps the last good state for queries and subscribers, then goes on with the next good one', async () => {
    server = await startServer();
    const s = server;
    const runId = '20260101_120000';
    const outputs = join(s.dir, 'outputs');
    await writeSyntheticRun(outputs, { runId, episodeCount: 6, workerCount: 1 });
    const dir = join(runsRoot(outputs), runId);
    const full = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
    await writeSummary(dir, runningAfter(full, 4));

    const states: Array<GqlResult<State>> = [];
    const done = wsCollect<State>(
      s.ws(),
      `subscription($id: ID!) { runProgress(id: $id) { status seq episodesDone episodes(first: 100) { total } } }`,
      { id: runId },
      (p) => states.push(p),
    );
    await waitFor('the first state', () => states.length === 1);

    const query = `query($id: ID!) { run(id: $id) { status seq episodesDone episodes(first: 100) { total } } }`;
    for (const garbage of [
      '{"seq": 99, "status": "RUNNING"}',
      '{"seq": 100, "status": "RUN',
      JSON.stringify({ ...runningAfter(full, 5), episodesDone: null }),
    ]) {
      await writeFile(join(dir, 'summary.json'), garbage);
      const r = await s.gql<{ run: { status: string; seq: number; episodesDone: number; episodes: { total: number } } }>(query, {
        id: runId,
      });
      expect(r.errors, garbage).toBeUndefined();
      expect(r.data!.run).toMatchObject({ status: 'RUNNING', episodesDone: 4, episodes: { total: 4 } });
      expect(r.data!.run.seq).toBe(states[0]!.data!.runProgress.seq);
    }

    await writeSummary(dir, { ...runningAfter(full, 6, 'COMPLETED'), seq: 3 });
    await done;
    expect(states.every((p) => !p.errors)).toBe(true);
    const got = states.map((p) => p.data!.runProgress);
    expect(got.map((g) => [g.status, g.episodesDone, g.episodes.total])).toEqual([
      ['RUNNING', 4, 4],
      ['RUNNING', 5, 5],
      ['COMPLETED', 6, 6],
    ]);
    for (let i = 1; i < got.length; i++) expect(got[i]!.seq).toBe(got[i - 1]!.seq + 1);
  });

  it('answers a run the server has not followed from the catalog and the episode records on disk', async () => {
    const outputs = await mkdtemp(join(tmpdir(), 'summary-disk-'));
    try {
      const runId = '20260101_123000';
      await writeSyntheticRun(outputs, { runId, episodeCount: 5, workerCount: 1 });
      const dir = join(runsRoot(outputs), runId);
      const full = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
      for (const record of full.episodes) {
        await mkdir(episodeDir(dir, record.index), { recursive: true });
        await writeFile(join(episodeDir(dir, record.index), 'episode.json'), JSON.stringify(record));
      }
      server = await startServer({ outputsDir: outputs });
      await writeFile(join(dir, 'summary.json'), JSON.stringify({ seq: 7, status: 'COMPLETED', runId, episodesDone: 'all' }));
      const r = await server.gql<{
        run: {
          status: string;
          episodesDone: number;
          episodes: { total: number };
          aggregateMetrics: Array<{ name: string; count: number; excluded: Array<{ count: number }> }>;
        };
      }>(
        `query($id: ID!) { run(id: $id) { status episodesDone episodes(first: 100) { total } aggregateMetrics { name count excluded { count } } } }`,
        {
          id: runId,
        },
      );
      expect(r.errors).toBeUndefined();
      expect(r.data!.run).toMatchObject({ status: 'COMPLETED', episodesDone: 5, episodes: { total: 5 } });
      // Every episode is in the metric or in its excluded counts (episodes that did not finish are left out of means).
      const success = r.data!.run.aggregateMetrics.find((m) => m.name === 'success')!;
      expect(success.count + success.excluded.reduce((n, e) => n + e.count, 0)).toBe(5);
    } finally {
      await server?.stop();
      server = undefined;
      await rm(outputs, { recursive: true, force: true });
    }
  });

  it('answers a run whose only summary.json is incomplete as not found, not as an internal error', async () => {
    server = await startServer();
    const runId = '20260101_130000';
    const outputs = join(server.dir, 'outputs');
    // Made elsewhere and moved in whole: the server watches its runs root, and must never see the valid summary first.
    const staging = join(server.dir, 'staging');
    await writeSyntheticRun(staging, { runId, episodeCount: 2, workerCount: 1 });
    await writeFile(join(runsRoot(staging), runId, 'summary.json'), JSON.stringify({ seq: 1, status: 'COMPLETED', runId }));
    await mkdir(runsRoot(outputs), { recursive: true });
    renameSync(join(runsRoot(staging), runId), join(runsRoot(outputs), runId));
    const r = await server.gql(`query($id: ID!) { run(id: $id) { status episodesDone } }`, { id: runId });
    expect(codeOf(r)).toBe('NOT_FOUND');
  });
});

describe('episode boundaries written faster than the server reads them', () => {
  it('each reach graphql-ws, SSE and the Python feed: every episodesDone value, seq one higher each time', async () => {
    server = await startServer();
    const s = server;
    const runId = '20260101_140000';
    const n = 30;
    const outputs = join(s.dir, 'outputs');
    await writeSyntheticRun(outputs, { runId, episodeCount: n, workerCount: 3 });
    const dir = join(runsRoot(outputs), runId);
    const full = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
    await writeSummary(dir, runningAfter(full, 0));

    type P = { runProgress: { status: string; seq: number; episodesDone: number } };
    let wsFirst = false;
    let sseFirst = false;
    const viaWs = wsCollect<P>(s.ws(), PROGRESS, { id: runId }, () => (wsFirst = true));
    const viaSse = sseCollect<P>(s.url, PROGRESS, { id: runId }, {}, () => (sseFirst = true));
    const python = execa('python3', ['-u', 'examples/notebook_feed.py', '--url', `${s.url}/graphql`, '--run', runId], {
      cwd: PACKAGE_ROOT,
      reject: false,
    });
    let pyOut = '';
    python.stdout!.on('data', (d: Buffer) => (pyOut += d.toString()));
    await waitFor("every client's first state", () => wsFirst && sseFirst && pyOut.includes(`0/${n} episodes`));

    // Every boundary back to back, without yielding: the server cannot read in between.
    const finishOrder = [...full.episodes].sort((a, b) =>
      a.finishedAt < b.finishedAt ? -1 : a.finishedAt > b.finishedAt ? 1 : a.index - b.index,
    );
    for (let k = 1; k <= n; k++) {
      const episodes = finishOrder.slice(0, k).sort((a, b) => a.index - b.index);
      const tmp = join(dir, `summary.json.${k}.tmp`);
      writeFileSync(
        tmp,
        JSON.stringify({
          ...full,
          ...computeAggregates(episodes),
          status: 'RUNNING',
          finishedAt: null,
          episodes,
          episodesDone: k,
          seq: k + 1,
        }),
      );
      renameSync(tmp, join(dir, 'summary.json'));
    }
    const tmp = join(dir, 'summary.json.end.tmp');
    writeFileSync(tmp, JSON.stringify({ ...full, seq: n + 2 }));
    renameSync(tmp, join(dir, 'summary.json'));

    const [ws, sse, py] = await Promise.all([viaWs, viaSse, python]);
    for (const events of [ws, sse.events]) {
      expect(events.every((e) => !e.errors)).toBe(true);
      const states = events.map((e) => e.data!.runProgress);
      expect(states.map((x) => x.episodesDone)).toEqual([...Array(n + 1).keys()]);
      for (let i = 1; i < states.length; i++) expect(states[i]!.seq).toBe(states[i - 1]!.seq + 1);
      expect(states.at(-1)!.status).toBe('COMPLETED');
    }
    expect(py.exitCode, py.stderr).toBe(0);
    for (let k = 0; k <= n; k++) expect(pyOut).toContain(` ${k}/${n} episodes`);
  });
});

describe('a run that lost workers', () => {
  it('lists its retired workers and why in run.retiredWorkers; a run that lost none has an empty list', async () => {
    const outputs = await mkdtemp(join(tmpdir(), 'summary-retired-'));
    try {
      await writeSyntheticRun(outputs, { runId: '20260101_130000', episodeCount: 4, workerCount: 3 });
      await writeSyntheticRun(outputs, { runId: '20260101_130100', episodeCount: 4, workerCount: 3 });
      const dir = join(runsRoot(outputs), '20260101_130000');
      const full = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
      const retiredWorkers = [{ workerId: 2, reason: 'its env host could not start (exit 1)' }];
      await writeSummary(dir, { ...full, retiredWorkers });
      server = await startServer({ outputsDir: outputs });
      const query = `query($id: ID!) { run(id: $id) { retiredWorkers { workerId reason } } }`;
      const lost = await server.gql<{ run: { retiredWorkers: unknown[] } }>(query, { id: '20260101_130000' });
      expect(lost.errors).toBeUndefined();
      expect(lost.data!.run.retiredWorkers).toEqual(retiredWorkers);
      const none = await server.gql<{ run: { retiredWorkers: unknown[] } }>(query, { id: '20260101_130100' });
      expect(none.data!.run.retiredWorkers).toEqual([]);
    } finally {
      await rm(outputs, { recursive: true, force: true });
    }
  });
});

describe("a finished run's summary.json edited afterwards", () => {
  const RUN_Q = `query($id: ID!) { run(id: $id) { id status pid finishedAt episodesDone summaryModified error { code }
    statusCounts { status count } episodes(first: 100) { total } } }`;
  const RUNS_Q = `{ runs { items { id status summaryModified } } }`;

  it('is shown as modified and never believed: not RUNNING in the API, the export, runProgress or the catalog rebuilt after a restart', async () => {
    server = await startServer();
    let s = server;
    const started = await s.gql(`mutation { startEval(input: { graphName: "gridnav_planner", episodeCount: 2 }) { runId } }`);
    const runId = started.data!.startEval.runId as string;
    const done = await waitFor(
      'the run to complete',
      async () => {
        const run = (await s.gql(RUN_Q, { id: runId })).data?.run;
        return run?.status === 'COMPLETED' && run;
      },
      60_000,
    );
    expect(done).toMatchObject({ summaryModified: false, episodesDone: 2 });
    const dir = join(runsRoot(join(s.dir, 'outputs')), runId);
    const digest = JSON.parse(await readFile(join(dir, 'summary.sha256.json'), 'utf8'));
    expect(digest).toMatchObject({ version: 1, recorded: { runId, status: 'COMPLETED' } });
    expect(digest.sha256).toMatch(/^[0-9a-f]{64}$/);

    // A well-formed edit: the run is RUNNING again under a pid that no longer exists, its figures changed.
    const exited = execa('true');
    const deadPid = exited.pid!;
    await exited;
    const original = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
    const edited: RunSummary = { ...original, status: 'RUNNING', finishedAt: null, pid: deadPid, episodesDone: 1, statusCounts: {} };
    await writeFile(join(dir, 'summary.json'), JSON.stringify(edited, null, 2));

    const expected = {
      status: 'COMPLETED',
      pid: null,
      finishedAt: done.finishedAt,
      episodesDone: 2,
      summaryModified: true,
      episodes: { total: 2 },
    };
    expect((await s.gql(RUN_Q, { id: runId })).data!.run).toMatchObject(expected);
    // A subscriber gets the recorded end and the stream ends, instead of waiting on a run that is not running.
    const states = await wsCollect(s.ws(), `subscription($id: ID!) { runProgress(id: $id) { status summaryModified } }`, { id: runId });
    expect(states.at(-1)!.data!.runProgress).toEqual({ status: 'COMPLETED', summaryModified: true });
    const exported = await (await fetch(`${s.url}/runs/${runId}/export.json`)).json();
    expect(exported).toMatchObject({ status: 'COMPLETED', summaryModified: true, episodesDone: 2 });
    expect(exported.pid).toBeUndefined();
    expect(codeOf(await s.gql(`mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: runId }))).toBe('CONFLICT');

    // Restarted, first on its catalog, then with the catalog rebuilt from the run directories.
    const dirOf = s.dir;
    await s.halt();
    for (const rebuild of [false, true]) {
      if (rebuild) await rm(join(dirOf, 'outputs', 'db.json'));
      server = await startServer({}, { dir: dirOf, port: 0 });
      s = server;
      expect((await s.gql(RUN_Q, { id: runId })).data!.run, `rebuild: ${rebuild}`).toMatchObject(expected);
      const row = (await s.gql(RUNS_Q)).data!.runs.items.find((r: { id: string }) => r.id === runId);
      expect(row, `rebuild: ${rebuild}`).toMatchObject(rebuild ? { status: 'COMPLETED', summaryModified: true } : { status: 'COMPLETED' });
      if (!rebuild) await s.halt();
    }
    // The edited file is left as it is: nothing rewrote it.
    expect(JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')).status).toBe('RUNNING');
  });
});
