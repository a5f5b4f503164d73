/**
 * The API end to end: a real server on port 0, real eval processes, and the three kinds of
 * client a user has (graphql-ws, SSE, the Python notebook feed).
 */
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/paths.js';
import {
  alive,
  PROGRESS,
  sseCollect,
  START_EVAL,
  startServer,
  waitFor,
  wsCollect,
  type GqlResult,
  type TestServer,
} from './app.helpers.js';

interface Progress {
  runProgress: { id: string; status: string; seq: number; episodesDone: number; episodeCount: number; pid: number | null };
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** The checks every progress stream must pass: state first, seq rising, every boundary, terminal last. */
function expectFullProgress(events: Array<GqlResult<Progress>>, episodeCount: number): void {
  expect(events.every((e) => !e.errors)).toBe(true);
  const states = events.map((e) => e.data!.runProgress);
  expect(states.length).toBeGreaterThanOrEqual(episodeCount + 1);
  for (let i = 1; i < states.length; i++) expect(states[i]!.seq).toBeGreaterThan(states[i - 1]!.seq);
  const done = states.map((s) => s.episodesDone);
  for (let k = 1; k <= episodeCount; k++) expect(done).toContain(k);
  for (let i = 1; i < done.length; i++) expect(done[i]!).toBeGreaterThanOrEqual(done[i - 1]!);
  const last = states.at(-1)!;
  expect(last.status).toBe('COMPLETED');
  expect(last.episodesDone).toBe(episodeCount);
  expect(states.slice(0, -1).every((s) => s.status === 'QUEUED' || s.status === 'RUNNING')).toBe(true);
}

describe('live progress of a real run', () => {
  it('reaches graphql-ws, SSE and the Python feed: current state, every episode boundary, the terminal state', async () => {
    server = await startServer();
    const s = server;
    // The run waits until every subscriber has its first state: a Python process slow to start must not miss episode 1.
    const release = s.app.scheduler.acquireInteractiveLock('test: subscribers first');
    const started = await s.gql<{ startEval: { runId: string; status: string; viaSubprocess: boolean } }>(START_EVAL, {
      input: { graphName: 'gridnav_planner', episodeCount: 12, workerCount: 1, overrides: { env: { step_latency_ms: 2 } } },
    });
    expect(started.errors).toBeUndefined();
    const { runId, status, viaSubprocess } = started.data!.startEval;
    expect(status).toBe('QUEUED');
    expect(viaSubprocess).toBe(true);

    let wsFirst = false;
    let sseFirst = false;
    const viaWs = wsCollect<Progress>(s.ws(), PROGRESS, { id: runId }, () => {
      wsFirst = true;
    });
    const viaSse = sseCollect<Progress>(s.url, PROGRESS, { id: runId }, {}, () => {
      sseFirst = true;
    });
    const episodes = wsCollect<{ episodeCompleted: { index: number; status: string } }>(
      s.ws(),
      `subscription($id: ID!) { episodeCompleted(runId: $id) { index status } }`,
      { id: runId },
    );
    const python = execa('python3', ['examples/notebook_feed.py', '--url', `${s.url}/graphql`, '--run', runId], {
      cwd: PACKAGE_ROOT,
      reject: false,
    });
    let pyFirst = false;
    python.stdout?.once('data', () => {
      pyFirst = true;
    });
    await waitFor('every subscriber to have the queued state', () => wsFirst && sseFirst && pyFirst);
    release();

    const [ws, sse, eps, py] = await Promise.all([viaWs, viaSse, episodes, python]);
    expectFullProgress(ws, 12);
    expect(sse.status).toBe(200);
    expectFullProgress(sse.events, 12);

    const indexes = eps.map((e) => e.data!.episodeCompleted.index);
    expect([...indexes].sort((a, b) => a - b)).toEqual([...Array(12).keys()]);

    expect(py.exitCode, py.stderr).toBe(0);
    for (let k = 1; k <= 12; k++) expect(py.stdout).toContain(` ${k}/12 episodes`);
    expect(py.stdout).toContain('final: COMPLETED');
    expect(py.stdout).toMatch(/success\s+\d/);

    // A client that connects after the end still gets the final state, then the end.
    const late = await wsCollect<Progress>(s.ws(), PROGRESS, { id: runId });
    expect(late.map((e) => e.data!.runProgress.status)).toEqual(['COMPLETED']);
    const lateSse = await sseCollect<Progress>(s.url, PROGRESS, { id: runId });
    expect(lateSse.events.map((e) => e.data!.runProgress.episodesDone)).toEqual([12]);

    // The run, its episodes, a log page and an image, as the dashboard reads them.
    const run = await s.gql(
      `query($id: ID!) { run(id: $id) { status episodesDone statusCounts { status count }
         aggregateMetrics { name mean count stderr }
         episodes(offset: 2, first: 3) { total items { index status steps metrics assets { name mime bytes url } log(first: 4) { total lines { step nodeId type } } } }
         episode(index: 11) { index episodeId } } }`,
      { id: runId },
    );
    expect(run.errors).toBeUndefined();
    const r = run.data!.run;
    expect(r.status).toBe('COMPLETED');
    expect(
      r.statusCounts.find((c: { status: string }) => c.status === 'COMPLETED').count +
        r.statusCounts.find((c: { status: string }) => c.status === 'BUDGET_EXHAUSTED').count,
    ).toBe(12);
    expect(r.aggregateMetrics.map((m: { name: string }) => m.name)).toEqual(
      expect.arrayContaining(['success', 'spl', 'distance_to_goal', 'steps']),
    );
    expect(r.episodes.total).toBe(12);
    expect(r.episodes.items.map((e: { index: number }) => e.index)).toEqual([2, 3, 4]);
    expect(r.episode.index).toBe(11);
    const ep = r.episodes.items[0];
    expect(ep.log.lines).toHaveLength(4);
    expect(ep.log.total).toBeGreaterThan(4);
    const asset = ep.assets.find((a: { mime: string }) => a.mime === 'image/png');
    expect(asset.url).toBe(`/runs/${runId}/episodes/2/assets/${asset.name}`);
    const png = await fetch(s.url + asset.url);
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await png.arrayBuffer());
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('\x89PNG');
    expect(bytes.length).toBe(asset.bytes);
  });

  it('cancels a running run: the stream ends CANCELLED, finished episodes are kept, no process is left', async () => {
    server = await startServer();
    const s = server;
    const started = await s.gql(START_EVAL, {
      input: { graphName: 'gridnav_planner', episodeCount: 8, overrides: { env: { step_latency_ms: 40 } } },
    });
    const runId = started.data!.startEval.runId as string;
    let pid: number | null = null;
    const client = s.ws();
    const progress = wsCollect<Progress>(client, PROGRESS, { id: runId }, (p) => {
      pid ??= p.data?.runProgress.pid ?? null;
    });
    await waitFor('the run to have a pid', () => pid);
    const cancelled = await s.gql(`mutation($id: ID!) { cancelRun(id: $id) { id status cancelRequested } }`, { id: runId });
    expect(cancelled.errors).toBeUndefined();
    // Still stopping (RUNNING, cancelRequested) or already done (CANCELLED, no longer stopping).
    expect([
      { status: 'RUNNING', cancelRequested: true },
      { status: 'CANCELLED', cancelRequested: false },
    ]).toContainEqual({ status: cancelled.data!.cancelRun.status, cancelRequested: cancelled.data!.cancelRun.cancelRequested });
    const events = await progress;
    const last = events.at(-1)!.data!.runProgress;
    expect(last.status).toBe('CANCELLED');
    const groupGone = () => {
      try {
        process.kill(-pid!, 0);
        return false;
      } catch {
        return true;
      }
    };
    await waitFor('the eval process and its group to be gone', () => !alive(pid!) && groupGone(), 10_000);
    await waitFor('the scheduler to finish the run', async () => (await s.gql(`{ activeJobs { runId } }`)).data!.activeJobs.length === 0);
    const after = await s.gql(
      `query($id: ID!) { run(id: $id) { status error { code } pid episodesDone episodes { total items { status } } } }`,
      { id: runId },
    );
    expect(after.data!.run.status).toBe('CANCELLED');
    expect(after.data!.run.error).toBeNull();
    expect(after.data!.run.pid).toBeNull();
    expect(after.data!.run.episodes.total).toBe(after.data!.run.episodesDone);
    expect(after.data!.run.episodes.items.filter((e: { status: string }) => e.status === 'CRASHED')).toEqual([]);

    // Cancelling it again answers the cancelled run, however far the server has got with tidying up.
    const again = await s.gql(`mutation($id: ID!) { cancelRun(id: $id) { id status } }`, { id: runId });
    expect(again.errors).toBeUndefined();
    expect(again.data!.cancelRun).toEqual({ id: runId, status: 'CANCELLED' });
  });

  it('runs in the backend with viaSubprocess false and reports the same metrics as a subprocess run', async () => {
    server = await startServer();
    const s = server;
    const input = { graphName: 'gridnav_planner', episodeCount: 3, seed: 7 };
    const a = (await s.gql(START_EVAL, { input: { ...input, viaSubprocess: false } })).data!.startEval;
    expect(a.viaSubprocess).toBe(false);
    const b = (await s.gql(START_EVAL, { input })).data!.startEval;
    const metricsOf = async (id: string) => {
      const events = await wsCollect<Progress>(s.ws(), PROGRESS, { id });
      expect(events.at(-1)!.data!.runProgress.status).toBe('COMPLETED');
      const r = await s.gql(`query($id: ID!) { run(id: $id) { viaSubprocess episodes { items { index metrics } } } }`, { id });
      return r.data!.run;
    };
    const [ra, rb] = await Promise.all([metricsOf(a.runId), metricsOf(b.runId)]);
    expect(ra.viaSubprocess).toBe(false);
    expect(rb.viaSubprocess).toBe(true);
    expect(ra.episodes.items).toEqual(rb.episodes.items);
  });
});
