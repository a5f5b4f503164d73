/** GraphQL over HTTP as the spec says: status codes per media type, checked also by graphql-http's audit. */
import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_EVAL, startServer, wsCollect, type TestServer } from './app.helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.stop();
});

async function post(accept: string, query: string, variables: Record<string, unknown>) {
  const res = await fetch(s.url + '/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify({ query, variables }),
  });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: (await res.json()) as { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> },
  };
}

describe('requests refused before they run (wrong variables, over a limit)', () => {
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['Int given "x"', 'query($n: Int) { runs(first: $n) { total } }', { n: 'x' }],
    ['ID given an object', 'query($id: ID!) { run(id: $id) { id } }', { id: { a: 1 } }],
    ['a required input field missing', START_EVAL, { input: { graphName: 'gridnav_planner' } }],
    [
      'a page size over the cost limit',
      'query($n: Int) { runs(first: 500) { items { episodes(first: $n) { items { index } } } } }',
      { n: 10000 },
    ],
  ];

  it('answer 400 without data under application/graphql-response+json', async () => {
    for (const [what, query, variables] of cases) {
      const r = await post('application/graphql-response+json', query, variables);
      expect(r.status, what).toBe(400);
      expect(r.type, what).toMatch(/application\/graphql-response\+json/);
      expect(r.body.data, what).toBeUndefined();
      expect(r.body.errors![0]!.extensions!.code, what).toBe('BAD_USER_INPUT');
    }
  });

  it('answer 200 with the errors under application/json', async () => {
    for (const [what, query, variables] of cases) {
      const r = await post('application/json', query, variables);
      expect(r.status, what).toBe(200);
      expect(r.body.errors![0]!.extensions!.code, what).toBe('BAD_USER_INPUT');
    }
  });
});

describe('over WebSocket', () => {
  it('the same errors arrive without the HTTP status yoga keeps for itself', async () => {
    const client = s.ws();
    const coercion = await wsCollect(client, 'query($n: Int) { runs(first: $n) { total } }', { n: 'x' });
    expect(coercion[0]!.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT' });
    const cost = await wsCollect(client, 'query($n: Int) { runs(first: 500) { items { episodes(first: $n) { items { index } } } } }', {
      n: 10000,
    });
    expect(cost[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', maxCost: 50000 });
    expect(cost[0]!.errors![0]!.extensions!.http).toBeUndefined();
    const invalid = await wsCollect(client, '{ nope }').catch(
      (e: Error) => JSON.parse(e.message) as Array<{ extensions?: Record<string, unknown> }>,
    );
    expect((invalid as Array<{ extensions?: Record<string, unknown> }>)[0]!.extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED' });
  });
});

describe('graphql-http audit', () => {
  it('passes every audit', async () => {
    const results = await Promise.all(
      serverAudits({ url: s.url + '/graphql' }).map(async (audit) => ({ name: audit.name, result: await audit.fn() })),
    );
    const notOk = results
      .filter((r) => r.result.status !== 'ok')
      .map((r) => `${r.name}: ${r.result.status} ${'reason' in r.result ? r.result.reason : ''}`);
    expect(notOk).toEqual([]);
    expect(results.length).toBeGreaterThan(30);
  });
});
