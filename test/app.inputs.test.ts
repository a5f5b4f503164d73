/**
 * Bad input gets a clear message and its `extensions.code`; the queue answers while nothing
 * can start (the interactive lock is held, so every run stays QUEUED).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initialSummary } from '../src/eval-process/summary-writer.js';
import { RUN_LIMITS } from '../src/spec/run-spec.js';
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
    // JSON.parse makes an own "__proto__" key, as the server's request parser does; a parsed record would drop it unheard.
    [
      'a "__proto__" config key',
      { overrides: { agent: JSON.parse('{"__proto__": {"epsilon": 0.9}}') } },
      /config key "__proto__" is not allowed/,
    ],
    ['a name with a NUL', { name: 'ok\u0000name' }, /name.*must not hold control or text-direction characters/],
    ['a tag that reverses the text after it', { tags: ['safe\u202egnp.exe'] }, /tags.*must not hold control or text-direction characters/],
    [
      'a note with an escape sequence',
      { note: 'line one\nline two \u001b[31m' },
      /note.*must not hold control or text-direction characters/,
    ],
    ['a "__proto__" node id', { overrides: JSON.parse('{"__proto__": {"x": 1}}') }, /node id "__proto__" is not allowed/],
  ])('%s', async (_what, input, message) => {
    const r = await start(input);
    expect(codeOf(r), JSON.stringify(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toMatch(message);
    expect(r.data?.startEval ?? null).toBeNull();
  });

  it.each([
    ['an unknown graph', { graphName: 'no_such_graph' }, 'graphName'],
    ['a dataset the env lacks', { dataset: 'nope' }, 'dataset'],
    ['a split the env lacks', { split: 'nope' }, 'split'],
    ['episodes past the end of the split', { split: 'test', episodeCount: 5000 }, 'episodeCount'],
    ['a first episode past the end of the split', { split: 'test', episodeOffset: 100_000 }, 'episodeOffset'],
  ])('%s names the field in extensions.field', async (_what, input, field) => {
    const r = await start(input);
    expect(codeOf(r), JSON.stringify(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.extensions).toMatchObject({ field });
  });

  it('an override the graph rejects lists every problem', async () => {
    const r = await s.gql(START_EVAL, { input: { graphName: 'gridnav_random', episodeCount: 1, overrides: { agent: { epsilon: 0.1 } } } });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.extensions).toMatchObject({ reason: 'GRAPH_INVALID', problems: [expect.stringContaining('epsilon')] });
  });

  it('a 1 MB override under a real config key is refused naming the limit, and nothing is queued', async () => {
    const queued = s.app.scheduler.queue().length;
    const r = await start({ overrides: { env: { step_latency_ms: 'x'.repeat(1024 * 1024) } } });
    expect(codeOf(r), JSON.stringify(r.errors)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.extensions).toMatchObject({ field: 'overrides', limit: RUN_LIMITS.maxOverridesBytes });
    expect(r.errors![0]!.message).toMatch(
      new RegExp(`^overrides must be at most ${RUN_LIMITS.maxOverridesBytes} bytes of JSON, got \\d+ bytes$`),
    );
    expect(s.app.scheduler.queue()).toHaveLength(queued);
  });

  it.each([
    ['a string for a number', { agent: { epsilon: 'abc' } }, 'node "agent": config "epsilon" must be a number in 0..1, got "abc"'],
    ['a number out of its declared range', { agent: { epsilon: 1.5 } }, 'node "agent": config "epsilon" must be a number in 0..1, got 1.5'],
    [
      'a string for a boolean',
      { env: { render_every_step: 'yes' } },
      'node "env": config "render_every_step" must be true or false, got "yes"',
    ],
    ['a fraction for an integer', { env: { fail_at_step: 2.5 } }, 'node "env": config "fail_at_step" must be an integer ≥ 0, got 2.5'],
  ])('a config value of the wrong type (%s) is refused at submit, naming node and key', async (_what, overrides, problem) => {
    const queued = s.app.scheduler.queue().length;
    const r = await start({ overrides });
    expect(codeOf(r), JSON.stringify(r.errors)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.extensions).toMatchObject({ reason: 'GRAPH_INVALID', problems: [problem] });
    expect(r.errors![0]!.message).toMatch(/^overrides: graph "gridnav_planner" is invalid: /);
    expect(r.errors![0]!.message).toContain(problem);
    expect(s.app.scheduler.queue()).toHaveLength(queued);
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

describe('a run whose spec.json is not a valid spec', () => {
  it('answers its fields from the summary, and SPEC_INVALID naming the field for those that need the spec', async () => {
    const id = '20200102_000000';
    const dir = runDirPath(join(s.dir, 'outputs'), id);
    await mkdir(dir, { recursive: true });
    const spec = { runId: id, graphName: 'gridnav_planner', episodeCount: 2, createdAt: '2020-01-02T00:00:00.000Z' };
    await writeFile(
      join(dir, 'summary.json'),
      JSON.stringify({ ...initialSummary({ ...spec, workerCount: 1, seed: 0, priority: 0 }), status: 'COMPLETED', seq: 1 }),
    );
    await writeFile(join(dir, 'spec.json'), JSON.stringify({ ...spec, overrides: 'agent.epsilon=0.2' }));
    const ok = await s.gql(`query($id: ID!) { run(id: $id) { id status graphName } }`, { id });
    expect(ok.errors).toBeUndefined();
    expect(ok.data!.run).toEqual({ id, status: 'COMPLETED', graphName: 'gridnav_planner' });
    const r = await s.gql(`query($id: ID!) { run(id: $id) { id overrides } }`, { id });
    expect(codeOf(r), JSON.stringify(r.errors)).toBe('SPEC_INVALID');
    expect(r.errors![0]!.extensions).toMatchObject({ field: 'overrides' });
    expect(r.errors![0]!.message).toMatch(/^spec\.json of run 20200102_000000 is not a valid run spec: overrides must be an object/);
  });
});

describe('a run seed past 32 bits (evalctl run --seed takes any safe integer)', () => {
  it('reads back as a number, not an error', async () => {
    const id = '20200103_000000';
    const seed = 3_000_000_000;
    const dir = runDirPath(join(s.dir, 'outputs'), id);
    await mkdir(dir, { recursive: true });
    const spec = { runId: id, graphName: 'gridnav_planner', episodeCount: 2, seed, createdAt: '2020-01-03T00:00:00.000Z' };
    await writeFile(
      join(dir, 'summary.json'),
      JSON.stringify({ ...initialSummary({ ...spec, workerCount: 1, priority: 0 }), status: 'COMPLETED', seq: 1 }),
    );
    await writeFile(join(dir, 'spec.json'), JSON.stringify(spec));
    const one = await s.gql(`query($id: ID!) { run(id: $id) { id seed } }`, { id });
    expect(one.errors).toBeUndefined();
    expect(one.data!.run).toEqual({ id, seed });
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

    const q = await s.gql(
      `{ queue { runId position priority waitingReason estimate { ramMb source } run { status } } activeJobs { runId } resources { interactiveLockHolder ramTotalMb } }`,
    );
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
    expect(again.errors).toBeUndefined();
    expect(again.data!.cancelRun.status).toBe('CANCELLED');
    for (const id of ids.slice(1)) await s.gql(`mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id });
    await client.dispose();
    await sub;
  });
});
