/**
 * Who may talk to the server and what they can read: loopback by default, a token beyond it
 * (HTTP, SSE and WebSocket), Host names and browser origins checked, no cross-site form posts,
 * no path outside the outputs dir, no query that stalls the server.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createRunDir, episodeDirName } from '../src/store/run-dir.js';
import { codeOf, gql, sseCollect, startServer, wsCollect, type TestServer } from './app.helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const TOKEN = 's3cret-token-for-tests';

/** Resolves with the close code the server ends a WebSocket with (or 0 when it acknowledged). */
function wsOutcome(
  url: string,
  params?: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => {
    class WithHeaders extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, headers ? { headers } : {});
      }
    }
    const client = createClient({
      url: url.replace(/^http/, 'ws') + '/graphql',
      webSocketImpl: WithHeaders,
      retryAttempts: 0,
      ...(params ? { connectionParams: params } : {}),
      on: {
        connected: () => {
          resolve({ code: 0, reason: 'connected' });
          void client.dispose();
        },
        closed: (event) => {
          const e = event as { code?: number; reason?: string };
          resolve({ code: e.code ?? -1, reason: String(e.reason ?? '') });
        },
        error: () => resolve({ code: -1, reason: 'error' }),
      },
    });
    client.subscribe({ query: '{ graphs { name } }' }, { next: () => {}, error: () => {}, complete: () => {} });
  });
}

describe('binding and tokens', () => {
  it('refuses to listen beyond loopback without a token, with a message that says what to do', () => {
    const saved = process.env.EVAL_API_TOKEN;
    delete process.env.EVAL_API_TOKEN;
    try {
      expect(() => buildApp({ outputsDir: '/tmp/unused-outputs', host: '0.0.0.0' })).toThrow(/EVAL_API_TOKEN/);
      expect(() => buildApp({ outputsDir: '/tmp/unused-outputs', host: '0.0.0.0', token: '' })).toThrow(/without a token/);
    } finally {
      if (saved !== undefined) process.env.EVAL_API_TOKEN = saved;
    }
  });

  it('with a token, refuses HTTP, SSE and WebSocket clients that lack it', async () => {
    server = await startServer({ host: '0.0.0.0', token: TOKEN });
    const url = server.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const none = await fetch(url + '/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ graphs { name } }' }),
    });
    expect(none.status).toBe(401);
    expect(((await none.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe('UNAUTHENTICATED');
    expect(codeOf(await gql(url, '{ graphs { name } }', {}, { authorization: 'Bearer wrong' }))).toBe('UNAUTHENTICATED');
    const ok = await gql(url, '{ graphs { name } }', {}, { authorization: `Bearer ${TOKEN}` });
    expect(ok.data!.graphs.length).toBeGreaterThan(0);

    // GET may carry the token in the query, for clients that cannot send headers (EventSource, <img>).
    const viaQuery = await fetch(`${url}/graphql?query=${encodeURIComponent('{ graphs { name } }')}&access_token=${TOKEN}`);
    expect(viaQuery.status).toBe(200);

    const sub = 'subscription { runProgress(id: "20990101_000000") { id } }';
    expect((await sseCollect(url, sub)).status).toBe(401);
    const sse = await sseCollect(url, sub, {}, { authorization: `Bearer ${TOKEN}` });
    expect(sse.status).toBe(200);
    expect(codeOf(sse.events[0]!)).toBe('NOT_FOUND');

    expect(await wsOutcome(url)).toMatchObject({ code: 4401, reason: expect.stringContaining('UNAUTHENTICATED') });
    expect((await wsOutcome(url, { token: 'wrong' })).code).toBe(4401);
    expect((await wsOutcome(url, { token: TOKEN })).code).toBe(0);

    expect((await fetch(url + '/runs/20990101_000000/episodes/0/assets/a.png')).status).toBe(401);
    expect((await fetch(url + `/runs/20990101_000000/episodes/0/assets/a.png?access_token=${TOKEN}`)).status).toBe(404);
    expect((await fetch(url + '/runs/20990101_000000/episodes/0/assets/a.png', { method: 'OPTIONS' })).status).toBe(405);
    expect(
      (
        await fetch(url + '/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `bearer  ${TOKEN}` },
          body: '{"query":"{ graphs { name } }"}',
        })
      ).status,
    ).toBe(200);
    expect((await fetch(url + '/healthz')).status).toBe(200);
  });
});

describe('browser origins', () => {
  it('refuses requests and WebSockets from a foreign page, allows loopback and configured origins', async () => {
    server = await startServer({ allowedOrigins: ['https://dash.example.org'] });
    const url = server.url;
    const post = (origin: string) =>
      fetch(url + '/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ query: '{ graphs { name } }' }),
      });
    expect((await post('https://evil.example.com')).status).toBe(403);
    expect((await post('http://localhost:5173')).status).toBe(200);
    expect((await post('https://dash.example.org')).status).toBe(200);
    expect((await wsOutcome(url, undefined, { origin: 'https://evil.example.com' })).code).not.toBe(0);
    expect((await wsOutcome(url, undefined, { origin: url })).code).toBe(0);
  });
});

/** A raw HTTP request with the given Host header (fetch does not let a caller set Host). */
function rawRequest(
  url: string,
  opts: { method?: string; host: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/graphql',
        method: opts.method ?? 'POST',
        headers: { host: opts.host, ...opts.headers },
        setHost: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('DNS rebinding', () => {
  const query = JSON.stringify({ query: '{ graphs { name } }' });
  const json = { 'content-type': 'application/json' };

  it('refuses a Host that is not a loopback name on HTTP, SSE and WebSocket, with or without a matching Origin', async () => {
    server = await startServer();
    const url = server.url;
    const port = new URL(url).port;
    const evil = `evil.example:${port}`;
    for (const origin of [undefined, `http://${evil}`]) {
      const headers = { ...json, ...(origin ? { origin } : {}) };
      const http = await rawRequest(url, { host: evil, headers, body: query });
      expect(http.status, `origin ${origin}`).toBe(403);
      expect(http.body).toMatch(/--allowed-hosts evil\.example/);
      const sse = await rawRequest(url, {
        host: evil,
        headers: { ...headers, accept: 'text/event-stream' },
        body: JSON.stringify({ query: 'subscription { queueChanged { queue { runId } } }' }),
      });
      expect(sse.status).toBe(403);
      expect((await wsOutcome(url, undefined, { host: evil, ...(origin ? { origin } : {}) })).code).not.toBe(0);
      const mutation = await rawRequest(url, {
        host: evil,
        headers,
        body: JSON.stringify({ query: 'mutation { cancelRun(id: "20990101_000000") { id } }' }),
      });
      expect(mutation.status).toBe(403);
    }
    expect((await rawRequest(url, { host: evil, method: 'GET' })).status).toBe(403);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`, `127.1.2.3:${port}`]) {
      expect((await rawRequest(url, { host, headers: json, body: query })).status, host).toBe(200);
    }
    expect((await wsOutcome(url, undefined, { host: `localhost:${port}` })).code).toBe(0);
    expect(server.app.scheduler.activeJobs()).toEqual([]);
  });

  it('accepts the names given in allowedHosts, a leading dot for a whole domain', async () => {
    server = await startServer({ allowedHosts: ['evals.lab.example', '.cluster.example'] });
    const url = server.url;
    const ok = (host: string) => rawRequest(url, { host, headers: json, body: query }).then((r) => r.status);
    expect(await ok('evals.lab.example:4000')).toBe(200);
    expect(await ok('EVALS.lab.example')).toBe(200);
    expect(await ok('node7.cluster.example')).toBe(200);
    expect(await ok('cluster.example')).toBe(200);
    expect(await ok('evil.example')).toBe(403);
    expect(await ok('evals.lab.example.evil.example')).toBe(403);
    expect(await ok('xcluster.example')).toBe(403);
    expect((await wsOutcome(url, undefined, { host: 'node7.cluster.example' })).code).toBe(0);
    expect(() => buildApp({ outputsDir: '/tmp/unused-outputs', allowedHosts: ['http://x/y'] })).toThrow(/not a host name/);
  });

  it('beyond loopback with a token takes any Host unless allowedHosts is given', async () => {
    server = await startServer({ host: '0.0.0.0', token: TOKEN });
    const auth = { ...json, authorization: `Bearer ${TOKEN}` };
    expect((await rawRequest(server.url, { host: 'gpu-box.lab.example', headers: auth, body: query })).status).toBe(200);
    await server.stop();
    server = await startServer({ host: '0.0.0.0', token: TOKEN, allowedHosts: ['gpu-box.lab.example'] });
    expect((await rawRequest(server.url, { host: 'gpu-box.lab.example', headers: auth, body: query })).status).toBe(200);
    expect((await rawRequest(server.url, { host: 'evil.example', headers: auth, body: query })).status).toBe(403);
  });
});

describe('cross-site requests', () => {
  it('refuses the POSTs a browser sends from any page unasked (form, multipart, text/plain), so they never run a mutation', async () => {
    server = await startServer();
    const url = server.url;
    const mutation = 'mutation { startEval(input: { graphName: "gridnav_planner", episodeCount: 1 }) { runId } }';
    const form = new URLSearchParams({ query: mutation });
    const multipart = new FormData();
    multipart.set('query', mutation);
    const attempts: Array<[string, RequestInit]> = [
      ['form', { body: form }],
      ['multipart', { body: multipart }],
      ['text/plain', { body: JSON.stringify({ query: mutation }), headers: { 'content-type': 'text/plain' } }],
      ['text/plain;charset', { body: JSON.stringify({ query: mutation }), headers: { 'content-type': 'text/plain;charset=UTF-8' } }],
      ['no content type', { body: new Blob([JSON.stringify({ query: mutation })]) }],
    ];
    for (const [what, init] of attempts) {
      const res = await fetch(url + '/graphql', { method: 'POST', ...init });
      expect(res.status, what).toBe(415);
      expect(((await res.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code, what).toBe(
        'BAD_USER_INPUT',
      );
    }
    expect(server.app.scheduler.queue()).toEqual([]);
    expect((await server.app.scheduler.catalog.listRuns({})).length).toBe(0);

    // JSON, application/graphql, or the custom header (which a foreign page cannot send without a preflight) are taken.
    const q = '{ graphs { name } }';
    expect(
      (
        await fetch(url + '/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json; charset=utf-8' },
          body: JSON.stringify({ query: q }),
        })
      ).status,
    ).toBe(200);
    expect((await fetch(url + '/graphql', { method: 'POST', headers: { 'content-type': 'application/graphql' }, body: q })).status).toBe(
      200,
    );
    expect(
      (await fetch(url + '/graphql', { method: 'POST', headers: { 'x-graphql-yoga-csrf': '1' }, body: new URLSearchParams({ query: q }) }))
        .status,
    ).toBe(200);
    expect((await fetch(`${url}/graphql?query=${encodeURIComponent(q)}`)).status).toBe(200);
  });
});

describe('paths', () => {
  it('no run id, episode index or asset name reads a file outside its episode', async () => {
    server = await startServer();
    const outputs = join(server.dir, 'outputs');
    await writeFile(join(outputs, 'secret.txt'), 'TOP SECRET');
    const { runId, dir } = createRunDir(outputs);
    const assets = join(dir, 'episodes', episodeDirName(0), 'assets');
    await mkdir(assets, { recursive: true });
    await writeFile(join(assets, 'ok.png'), 'png-bytes');
    await writeFile(join(dir, 'spec.json'), '{"secret": "spec"}');

    const good = await fetch(`${server.url}/runs/${runId}/episodes/0/assets/ok.png`);
    expect(good.status).toBe(200);
    expect(await good.text()).toBe('png-bytes');

    const attempts = [
      `/runs/${runId}/episodes/0/assets/..%2F..%2F..%2Fspec.json`,
      `/runs/${runId}/episodes/0/assets/%2e%2e`,
      `/runs/${runId}/episodes/0/assets/.hidden`,
      `/runs/${runId}/episodes/..%2F..%2F..%2F..%2F/assets/secret.txt`,
      `/runs/..%2F..%2Fsecret.txt/episodes/0/assets/x`,
      `/runs/..%2Feval_runs%2F${runId}/episodes/0/assets/ok.png`,
      `/runs/${runId}/episodes/0/assets/ok.png%00.txt`,
      `/runs/${runId}/episodes/-1/assets/ok.png`,
      `/..%2F..%2Fsecret.txt`,
      `/%2e%2e/%2e%2e/secret.txt`,
      `/../outputs/secret.txt`,
    ];
    for (const path of attempts) {
      const res = await fetch(server.url + path);
      const body = await res.text();
      expect(body, path).not.toContain('TOP SECRET');
      expect(body, path).not.toContain('"secret": "spec"');
    }
    // Encoded separators reach the asset route and are refused there.
    for (const path of attempts.slice(0, 8).filter((p) => !p.includes('%2e%2e'))) {
      expect((await fetch(server.url + path)).status, path).toBe(400);
    }
    const viaApi = await server.gql(`{ run(id: "../secret") { id } }`);
    expect(codeOf(viaApi)).toBe('BAD_USER_INPUT');
  });
});

describe('limits and the dashboard route', () => {
  it('refuses a query deeper than the depth limit', async () => {
    server = await startServer({ limits: { maxDepth: 4 } });
    const ok = await server.gql(`{ runs { items { aggregateMetrics { name } } } }`);
    expect(ok.errors).toBeUndefined();
    const deep = await server.gql(`{ runs { items { episodes { items { index } } } } }`);
    expect(codeOf(deep)).toBe('BAD_USER_INPUT');
    expect(deep.errors![0]!.message).toMatch(/5 levels of nesting; the limit is 4/);
    const viaFragments = await server.gql(`{ runs { ...R } } fragment R on RunPage { items { episodes { items { index } } } }`);
    expect(codeOf(viaFragments)).toBe('BAD_USER_INPUT');
    expect(viaFragments.errors![0]!.message).toMatch(/5 levels of nesting/);
    const sub = await wsCollect(server.ws(), `subscription { queueChanged { queue { run { episodes { items { index } } } } } }`).catch(
      (e: Error) => e.message,
    );
    expect(sub).toMatch(/levels of nesting/);
  });

  it('refuses too many aliases or directives (BAD_USER_INPUT) and too many tokens (GRAPHQL_PARSE_FAILED)', async () => {
    server = await startServer({ limits: { maxAliases: 3, maxDirectives: 2, maxTokens: 60 } });
    const aliases = await server.gql(`{ a: graphs { name } b: graphs { name } c: graphs { name } d: graphs { name } }`);
    expect(codeOf(aliases)).toBe('BAD_USER_INPUT');
    expect(aliases.errors![0]!.message).toMatch(/4 aliases; the limit is 3/);
    const directives = await server.gql(`{ graphs @include(if: true) { name @include(if: true) description @skip(if: false) } }`);
    expect(codeOf(directives)).toBe('BAD_USER_INPUT');
    expect(directives.errors![0]!.message).toMatch(/3 directives; the limit is 2/);
    const tokens = await server.gql(`{ ${Array.from({ length: 40 }, () => 'graphs { name }').join(' ')} }`);
    expect(codeOf(tokens)).toBe('GRAPHQL_PARSE_FAILED');
    expect(tokens.errors![0]!.message).toMatch(/[Tt]oken limit of 60/);
    expect((await server.gql(`{ a: graphs { name } b: graphs { name } }`)).errors).toBeUndefined();
  });

  it('refuses a 1 KB query of doubling fragments at once, while /healthz keeps answering', async () => {
    server = await startServer();
    // Each fragment spreads the next twice: 30 levels select 2^31 fields in 1.4 KB.
    let query = '{ runs { ...F0 } }';
    for (let i = 0; i < 30; i++) query += ` fragment F${i} on RunPage { total ...F${i + 1} ...F${i + 1} }`;
    query += ' fragment F30 on RunPage { total }';
    const url = server.url;
    const timed = async <T>(f: () => Promise<T>) => {
      const t0 = performance.now();
      const value = await f();
      return { ms: performance.now() - t0, value };
    };
    let best = { query: Infinity, healthz: Infinity };
    // The fastest of a few tries: the machine's load is not this test's to control, the work done per query is.
    for (let attempt = 0; attempt < 5; attempt++) {
      const [q, h] = await Promise.all([timed(() => server!.gql(query)), timed(() => fetch(url + '/healthz').then((r) => r.status))]);
      expect(codeOf(q.value)).toBe('BAD_USER_INPUT');
      expect(q.value.errors![0]!.message).toMatch(/costs \d+ .*the limit is 50000/);
      expect(h.value).toBe(200);
      best = { query: Math.min(best.query, q.ms), healthz: Math.min(best.healthz, h.ms) };
    }
    expect(best.query).toBeLessThanOrEqual(50);
    expect(best.healthz).toBeLessThanOrEqual(50);
  });

  it('serves the dashboard build with an index fallback, a plain page when it is missing, GraphiQL for browsers', async () => {
    server = await startServer();
    const missing = await fetch(server.url + '/');
    expect(missing.status).toBe(200);
    expect(await missing.text()).toContain('dashboard is not built');

    // The build is read per request, so one appearing later is served at once.
    const web = join(server.dir, 'no-web');
    await mkdir(join(web, 'assets'), { recursive: true });
    await writeFile(join(web, 'index.html'), '<!doctype html><title>dash</title>');
    await writeFile(join(web, 'assets', 'app.js'), 'console.log(1)');
    const index = await fetch(server.url + '/');
    expect(await index.text()).toContain('<title>dash</title>');
    const route = await fetch(server.url + '/runs/20260101_000000');
    expect(await route.text()).toContain('<title>dash</title>');
    const js = await fetch(server.url + '/assets/app.js');
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(server.url + '/assets/missing.js')).status).toBe(404);
    const graphiql = await fetch(server.url + '/graphql', { headers: { accept: 'text/html' } });
    expect(await graphiql.text()).toMatch(/graphiql/i);
  });
});
