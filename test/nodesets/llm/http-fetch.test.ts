/** httpFetch, the transport the llm node gives the openai client: what fetch promises, on node:http. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { httpFetch, limitedFetch, ResponseTooLargeError } from '../../../src/nodesets/llm/http-fetch.js';
import { startOpenAIStub } from '../../support/openai-stub.js';

let server: Server | undefined;

async function serve(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Resolves once `res` drained or closed, leaving no listener behind. */
const drainedOrClosed = (res: ServerResponse): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.once('drain', done).once('close', done);
  });

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

describe('httpFetch', () => {
  it('sends the method, headers and body, and answers with the status, headers and body', async () => {
    const url = await serve((req, body, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'r1' });
      res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization, body: JSON.parse(body) }));
    });
    const res = await httpFetch(`${url}/v1/x`, { method: 'POST', headers: new Headers({ Authorization: 'Bearer k' }), body: '{"a":1}' });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get('x-request-id')).toBe('r1');
    expect(await res.json()).toEqual({ method: 'POST', auth: 'Bearer k', body: { a: 1 } });
  });

  it('decodes a gzip answer as the built-in fetch does, and gives a 204 no body', async () => {
    const url = await serve((req, _body, res) => {
      if (req.url === '/empty') return void res.writeHead(204).end();
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ ok: true })));
    });
    const res = await httpFetch(`${url}/zipped`);
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(await res.json()).toEqual({ ok: true });
    const empty = await httpFetch(`${url}/empty`);
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe('');
  });

  it('a body reads once, by any of the Response methods or as a stream, as from the built-in fetch', async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"n":1}');
    });
    const readers: [string, (r: Response) => Promise<unknown>, unknown][] = [
      ['json', (r) => r.json(), { n: 1 }],
      ['text', (r) => r.text(), '{"n":1}'],
      ['arrayBuffer', async (r) => Buffer.from(await r.arrayBuffer()).toString(), '{"n":1}'],
      ['bytes', async (r) => Buffer.from(await r.bytes()).toString(), '{"n":1}'],
      ['blob', async (r) => (await r.blob()).text(), '{"n":1}'],
      ['body', async (r) => new Response(r.body).text(), '{"n":1}'],
    ];
    for (const [name, read, expected] of readers) {
      for (const other of [
        (r: Response) => r.json(),
        (r: Response) => r.text(),
        (r: Response) => r.blob(),
        async (r: Response) => r.clone(),
      ]) {
        const builtIn = await fetch(`${url}/n`);
        const ours = await httpFetch(`${url}/n`);
        expect(ours.bodyUsed, name).toBe(false);
        expect(await read(ours), name).toEqual(expected);
        expect(await read(builtIn), name).toEqual(expected);
        expect(ours.bodyUsed, name).toBe(builtIn.bodyUsed);
        await expect(other(ours), `${name} then another read`).rejects.toBeInstanceOf(TypeError);
        await expect(other(builtIn), `${name} then another read`).rejects.toBeInstanceOf(TypeError);
      }
    }
    // A clone reads apart from its original.
    const res = await httpFetch(`${url}/n`);
    const copy = res.clone();
    expect(await copy.json()).toEqual({ n: 1 });
    expect(await res.text()).toBe('{"n":1}');
  });

  it('an abort rejects with an AbortError, a refused connection with "fetch failed" and its cause', async () => {
    const url = await serve(() => {
      // never answers
    });
    const ac = new AbortController();
    const pending = httpFetch(`${url}/hang`, { signal: ac.signal });
    setImmediate(() => ac.abort());
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await expect(httpFetch('http://127.0.0.1:1/v1')).rejects.toMatchObject({
      message: 'fetch failed',
      cause: { code: 'ECONNREFUSED' },
    });
  });

  it('under the openai client: completions, HTTP errors and its own timeout read as with the default fetch', async () => {
    const stub = await startOpenAIStub({ expectedKey: 'k' });
    try {
      const client = new OpenAI({ baseURL: stub.baseURL, apiKey: 'k', maxRetries: 0, fetch: httpFetch, timeout: 2000 });
      const done = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'What is 2 + 3?' }] });
      expect(done.choices[0]?.message.content).toBe('5');
      expect(done.usage?.prompt_tokens).toBeGreaterThan(0);
      const wrongKey = new OpenAI({ baseURL: stub.baseURL, apiKey: 'other', maxRetries: 0, fetch: httpFetch });
      await expect(wrongKey.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(
        OpenAI.AuthenticationError,
      );
      stub.setOptions({ expectedKey: 'k', latencyMs: 5000 });
      const slow = new OpenAI({ baseURL: stub.baseURL, apiKey: 'k', maxRetries: 0, fetch: httpFetch, timeout: 50 });
      await expect(slow.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(
        OpenAI.APIConnectionTimeoutError,
      );
    } finally {
      await stub.close();
    }
  });

  it('limitedFetch stops reading past its limit: a 20 MB stream, a declared length, a gzip bomb; an answer within it reads whole', async () => {
    const MiB = 1024 * 1024;
    let streamed = 0;
    let closed!: () => void;
    const gone = new Promise<void>((r) => (closed = r));
    const url = await serve(async (req, _body, res) => {
      if (req.url === '/declared') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(20 * MiB) });
        return void res.write('{');
      }
      if (req.url === '/bomb') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        return void res.end(gzipSync(Buffer.alloc(20 * MiB, 0x20)));
      }
      if (req.url === '/small') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ s: 'x'.repeat(MiB - 100) }));
      }
      // 20 MB, a chunk each time the socket drains, until the client goes away.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('close', closed);
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      while (streamed < 20 * MiB && !res.destroyed) {
        streamed += chunk.length;
        if (!res.write(chunk)) await drainedOrClosed(res);
      }
      res.end();
    });
    const fetchAtMost = limitedFetch(MiB);
    const err = await fetchAtMost(`${url}/v1/chat/completions?x=1`, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err).toMatchObject({ code: 'LLM_RESPONSE_TOO_LARGE', limit: MiB, url: `${url}/v1/chat/completions` });
    expect((err as Error).message).toBe(
      `${url}/v1/chat/completions answered with more than 1048576 bytes (max_response_bytes); the answer was abandoned`,
    );
    await gone;
    // The server could hand the socket a few buffers more before it closed, not the 20 MB.
    expect(streamed).toBeLessThan(10 * MiB);
    await expect(fetchAtMost(`${url}/declared`)).rejects.toBeInstanceOf(ResponseTooLargeError);
    await expect(fetchAtMost(`${url}/bomb`)).rejects.toBeInstanceOf(ResponseTooLargeError);
    const small = await fetchAtMost(`${url}/small`);
    expect(((await small.json()) as { s: string }).s).toHaveLength(MiB - 100);
  });

  it('with a proxy named in the environment (the built-in fetch) the limit holds too', async () => {
    const url = await serve(async (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      for (let sent = 0; sent < 20_000_000 && !res.destroyed; sent += chunk.length) {
        if (!res.write(chunk)) await drainedOrClosed(res);
      }
      res.end();
    });
    const module = fileURLToPath(new URL('../../../src/nodesets/llm/http-fetch.ts', import.meta.url));
    const script = [
      `const { limitedFetch, PROXIED } = await import(${JSON.stringify(module)});`,
      `const err = await limitedFetch(1024 * 1024)(${JSON.stringify(`${url}/v1/chat/completions`)}).then(() => undefined, (e) => e);`,
      'console.log(JSON.stringify({ proxied: PROXIED, code: err?.code, message: err?.message }));',
    ].join('\n');
    // NODE_USE_ENV_PROXY with no proxy set: the built-in fetch, straight to the server.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../../..', import.meta.url)),
      env: { ...process.env, NODE_USE_ENV_PROXY: '1', HTTP_PROXY: '', HTTPS_PROXY: '', http_proxy: '', https_proxy: '' },
    });
    expect(JSON.parse(stdout)).toEqual({
      proxied: true,
      code: 'LLM_RESPONSE_TOO_LARGE',
      message: `${url}/v1/chat/completions answered with more than 1048576 bytes (max_response_bytes); the answer was abandoned`,
    });
  });
});
