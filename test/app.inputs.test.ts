/**
 * Bad input gets a clear message and its `extensions.code`; the queue answers while nothing
 * can start (the interactive lock is held, so every run stays QUEUED).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDirPath } from '../src/store/run-dir.js';
import { codeOf, START_EVAL, startServer, waitFor, wsCollect, type TestServer } from './app.helpers.js';

let s: TestServer;
let releaseLock: () => void;

beforeAll(async () => {
  s = await startServer({ scheduler: { queueCapacity: 3 } });
  releaseLock = s.app.scheduler.acquireInteractiveLock('test: hold admission');
});
afterAll(async () => {
  releaseLock?.();
  await s?.stop();
});

const start = (input: Record<string, unknown>) => s.gql(START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 2, ...input } });

describe('startEval refuses bad input with BAD_USER_INPUT, naming the bad value', () => {
  it.each([
    ['an unknown graph', { graphName: 'no_such_graph' }, /no_such_graph/],
    ['a malformed graph name', { graphName: '../etc/passwd' }, /graph name/],
    ['episodeCount 0', { episodeCount: 0 }, /episode/i],
    ['a negative worker count', { workerCount: -1 }, /worker/i],
    ['a step budget of 0', { stepBudget: 0 }, /budget/i],
    ['an override for a node the graph lacks', { overrides: { nope: { epsilon: 0.5 } } }, /nope/],
    ['overrides that are not an object', { overrides: [1, 2] }, /overrides/],
  ])('%s', async (_what, input, message) => {
    const r = await start(input);
    expect(codeOf(r), JSON.stringify(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toMatch(message);
    expect(r.data?.startEval ?? null).toBeNull();
  });

  it('an override the graph rejects lists every problem', async () => {
    const r = await s.gql(START_EVAL, { input: { graphName: 'gridnav_random', episodeCount: 1, overrides: { agent: { epsilon: 0.1 } } } });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.extensions).toMatchObject({ reason: 'GRAPH_INVALID', problems: [expect.stringContaining('epsilon')] });
  });

  it('a value of the wrong type', async () => {
    const r = await s.gql(START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 'many' } });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
  });
});

describe('runs are looked up safely', () => {
  it('a malformed run id is BAD_USER_INPUT and an unknown one NOT_FOUND', async () => {
    for (const id of ['../../etc', '20260101_000000/../../x', 'x'.repeat(300), '']) {
      const r = await s.gql(`query($id: ID!) { run(id: $id) { id } }`, { id });
      expect(codeOf(r), id).toBe('BAD_USER_INPUT');
    }
    const r = await s.gql(`query { run(id: "20990101_000000") { id } }`);
    expect(codeOf(r)).toBe('NOT_FOUND');
    expect(r.errors![0]!.message).toContain('20990101_000000');
    const c = await s.gql(`mutation { cancelRun(id: "20990101_000000") { id } }`);
    expect(codeOf(c)).toBe('NOT_FOUND');
    const sub = await wsCollect(s.ws(), `subscription { runProgress(id: "20990101_000000") { id } }`).catch((e: unknown) => e);
    expect(JSON.stringify(sub)).toContain('NOT_FOUND');
  });

  it('paging arguments out of range are BAD_USER_INPUT', async () => {
    expect(codeOf(await s.gql(`{ runs(first: 0) { total } }`))).toBe('BAD_USER_INPUT');
    expect(codeOf(await s.gql(`{ runs(offset: -1) { total } }`))).toBe('BAD_USER_INPUT');
    expect(codeOf(await s.gql(`{ runs(first: 100000) { total } }`))).toBe('BAD_USER_INPUT');
  });

  it('an unexpected failure is masked as INTERNAL_SERVER_ERROR without internals', async () => {
    const id = '20200101_000000';
    const dir = runDirPath(join(s.dir, 'outputs'), id);
    // A summary.json that cannot be read at all (a folder): an unexpected failure, not bad input.
    await mkdir(join(dir, 'summary.json'), { recursive: true });
    const r = await s.gql(`query($id: ID!) { run(id: $id) { id status graphName } }`, { id });
    expect(codeOf(r)).toBe('INTERNAL_SERVER_ERROR');
    expect(r.errors![0]!.message).toBe('Unexpected error.');
  });
});

describe('query limits', () => {
  it('refuses a query whose pages multiply past the cost limit', async () => {
    const r = await s.gql(`{ runs(first: 500) { items { episodes(first: 10000) { items { index metrics } } } } }`);
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toMatch(/cost/);
    const v = await s.gql(`query($n: Int) { runs(first: 500) { items { episodes(first: $n) { items { index } } } } }`, { n: 10000 });
    expect(codeOf(v)).toBe('BAD_USER_INPUT');
    const ok = await s.gql(`{ runs(first: 20) { items { episodes(first: 100) { items { index } } } } }`);
    expect(ok.errors).toBeUndefined();
  });
});

describe('the queue', () => {
  it('holds runs while the interactive lock is held, says why, fills up, and cancels', async () => {
    const changes: unknown[] = [];
    const client = s.ws();
    let firstState = false;
    const sub = new Promise<void>((resolve) => {
      client.subscribe(
        { query: `subscription { queueChanged { queue { runId position waitingReason } activeJobs { runId } } }` },
        {
          next: (p) => {
            changes.push(p);
            firstState = true;
          },
          error: () => resolve(),
          complete: () => resolve(),
        },
      );
    });
    await waitFor('the first queue state', () => firstState);

    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await start({ priority: i });
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      expect(r.data!.startEval.status).toBe('QUEUED');
      ids.push(r.data!.startEval.runId);
    }
    const full = await start({});
    expect(codeOf(full)).toBe('QUEUE_FULL');
    expect(full.errors![0]!.extensions!.capacity).toBe(3);

    const q = await s.gql(`{ queue { runId position priority waitingReason estimate { ramMb source } run { status } } activeJobs { runId } resources { interactiveLockHolder ramTotalMb } }`);
    expect(q.errors).toBeUndefined();
    expect(q.data!.queue.map((e: { runId: string }) => e.runId)).toEqual([...ids].reverse());
    expect(q.data!.queue[0].position).toBe(1);
    expect(q.data!.queue[0].waitingReason).toMatch(/hold admission|interactive/i);
    expect(q.data!.queue[0].run.status).toBe('QUEUED');
    expect(q.data!.activeJobs).toEqual([]);
    expect(q.data!.resources.interactiveLockHolder).toBe('test: hold admission');

    await waitFor('queueChanged to show three queued runs', () =>
      changes.some((c) => (c as { data: { queueChanged: { queue: unknown[] } } }).data.queueChanged.queue.length === 3),
    );

    const listed = await s.gql(`{ runs(status: QUEUED, first: 2) { total items { id status } } }`);
    expect(listed.data!.runs.total).toBe(3);
    expect(listed.data!.runs.items).toHaveLength(2);

    const cancelled = await s.gql(`mutation($id: ID!) { cancelRun(id: $id) { id status } }`, { id: ids[0] });
    expect(cancelled.data!.cancelRun.status).toBe('CANCELLED');
    const again = await s.gql(`mutation($id: ID!) { cancelRun(id: $id) { id status } }`, { id: ids[0] });
    expect(codeOf(again)).toBe('CONFLICT');
    for (const id of ids.slice(1)) await s.gql(`mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id });
    await client.dispose();
    await sub;
  });
});
