/**
 * Requests as raw bytes on a TCP socket, the way a scanner or a proxy sends them: absolute-form
 * and asterisk-form targets, a Host that is no host name, media types in any case. Each answer is
 * a short coded JSON error or the result, never a stack trace, and every 415 says what is taken.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { startServer, type TestServer } from '../app.helpers.js';

const TOKEN = 'routes-test-token';
const QUERY = JSON.stringify({ query: '{ graphs { name } }' });

let server: TestServer;
let port: number;
beforeAll(async () => {
  // Beyond loopback with a token: the mode in which any Host header reaches the routes.
  server = await startServer({ host: '0.0.0.0', token: TOKEN });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.stop();
});

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
  raw: string;
}

/** Sends `head` lines and `body` as they are, with Connection: close, and reads the answer to its end. */
function raw(requestLine: string, headers: Record<string, string>, body = QUERY): Promise<RawAnswer> {
  const lines = [
    requestLine,
    ...Object.entries({ host: `127.0.0.1:${port}`, authorization: `Bearer ${TOKEN}`, ...headers }).map(([k, v]) => `${k}: ${v}`),
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
  ];
  return new Promise((resolve, reject) => {
    // No half-close: the server ends the connection after its answer (connection: close).
    const socket = connect(port, '127.0.0.1', () => socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      let payload = rest.join('\r\n\r\n');
      if (/transfer-encoding: chunked/i.test(head)) {
        let out = '';
        for (let at = 0; ; ) {
          const eol = payload.indexOf('\r\n', at);
          const size = Number.parseInt(payload.slice(at, eol), 16);
          if (!(size > 0)) break;
          out += payload.slice(eol + 2, eol + 2 + size);
          at = eol + 2 + size + 2;
        }
        payload = out;
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body: payload, raw: text });
    });
  });
}

const json = { 'content-type': 'application/json' };
const codeOf = (a: RawAnswer) => (JSON.parse(a.body) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code;
const messageOf = (a: RawAnswer) => (JSON.parse(a.body) as { errors: Array<{ message: string }> }).errors[0]!.message;
/** A V8 stack frame ("    at fn (file:line:col)"), or a path of this installation. */
const leaks = (a: RawAnswer) => /\n\s+at .*:\d+:\d+/.test(a.raw) || a.raw.includes(PACKAGE_ROOT) || a.raw.includes('node_modules');

describe('the HTTP surface', () => {
  it('answers an absolute-form or asterisk-form target 400 with a short message, never a stack trace', async () => {
    const answers = [
      await raw('POST http://evil.example/graphql HTTP/1.1', json),
      await raw(`POST http://127.0.0.1:${port}/graphql HTTP/1.1`, json),
      await raw('GET http://evil.example/healthz HTTP/1.1', {}, ''),
      await raw('OPTIONS * HTTP/1.1', {}, ''),
    ];
    for (const a of answers) {
      expect(a.status, a.raw).toBe(400);
      expect(codeOf(a)).toBe('BAD_USER_INPUT');
      expect(messageOf(a)).toBe('the request target must be a path such as /graphql, not a full URL or "*"');
      expect(leaks(a), a.raw).toBe(false);
    }
    // The same request in origin-form is answered.
    const ok = await raw('POST /graphql HTTP/1.1', json);
    expect(ok.status, ok.raw).toBe(200);
    const upgrade = {
      upgrade: 'websocket',
      connection: 'Upgrade',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      'sec-websocket-protocol': 'graphql-transport-ws',
    };
    // A WebSocket upgrade too (the same in origin-form connects: the subscription tests use it).
    expect((await raw('GET http://evil.example/graphql HTTP/1.1', upgrade, '')).status).toBe(400);
  });

  it('answers a Host that is no host name 400 (it would make yoga build an invalid URL), and no hostile request gets a stack', async () => {
    for (const host of ['a b', '[', 'evil.example/x', 'user@evil.example']) {
      const a = await raw('POST /graphql HTTP/1.1', { ...json, host });
      expect([a.status, codeOf(a), messageOf(a)], a.raw).toEqual([
        400,
        'BAD_USER_INPUT',
        `Host ${JSON.stringify(host)} is not a host name`,
      ]);
    }
    for (const param of ['variables', 'extensions']) {
      const a = await raw(`GET /graphql?query=%7Bgraphs%7Bname%7D%7D&${param}=%7Bx HTTP/1.1`, {}, '');
      expect([a.status, codeOf(a), messageOf(a)], a.raw).toEqual([400, 'BAD_USER_INPUT', `the ${param} query parameter is not valid JSON`]);
    }
    const hostile = [
      await raw('POST //evil.example/graphql HTTP/1.1', json),
      await raw('POST /graphql HTTP/1.1', json, '{"query": '),
      await raw('POST /graphql HTTP/1.1', json, '[1, 2]'),
      await raw('GET /graphql?query=%7B HTTP/1.1', {}, ''),
      await raw('PROPFIND /graphql HTTP/1.1', json),
      await raw('GET /runs/..%2F..%2Fetc/export.csv HTTP/1.1', {}, ''),
      await raw('GET /runs/20260101_000000/export.csv HTTP/1.1', {}, ''),
      await raw('GET /%00 HTTP/1.1', {}, ''),
    ];
    for (const a of hostile) {
      expect(a.status, a.raw).toBeGreaterThanOrEqual(200);
      expect(a.status, a.raw).toBeLessThan(500);
      expect(leaks(a), a.raw).toBe(false);
    }
  });

  it('takes media types in any case and with parameters; every 415 says what is taken', async () => {
    for (const type of [
      'Application/JSON',
      'APPLICATION/JSON ; Charset=UTF-8',
      'application/json;charset=utf-8',
      'Application/GraphQL+JSON',
    ]) {
      const a = await raw('POST /graphql HTTP/1.1', { 'content-type': type });
      expect(a.status, `${type}: ${a.raw}`).toBe(200);
      expect(JSON.parse(a.body)).toMatchObject({ data: { graphs: expect.arrayContaining([{ name: 'gridnav_planner' }]) } });
    }
    const graphql = await raw('POST /graphql HTTP/1.1', { 'content-type': 'Application/GraphQL' }, '{ graphs { name } }');
    expect(graphql.status, graphql.raw).toBe(200);

    const refused: Array<[Record<string, string>, string]> = [
      [{ 'content-type': 'text/plain' }, '"text/plain"'],
      [{}, 'none'],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, '"application/x-www-form-urlencoded"'],
      // The header that lets a form through does not make any other body readable.
      [{ 'content-type': 'Text/Plain', 'x-graphql-yoga-csrf': '1' }, '"text/plain"'],
      [{ 'content-type': 'application/xml', 'x-graphql-yoga-csrf': '1' }, '"application/xml"'],
    ];
    for (const [headers, got] of refused) {
      const a = await raw('POST /graphql HTTP/1.1', headers);
      expect(a.status, a.raw).toBe(415);
      expect(codeOf(a)).toBe('BAD_USER_INPUT');
      expect(messageOf(a)).toMatch(
        new RegExp(
          `^POST /graphql takes content-type application/json \\(or application/graphql\\+json, application/graphql\\), got ${got.replace(/[+]/g, '\\+')}; a form \\(urlencoded or multipart\\) only with a x-graphql-yoga-csrf header`,
        ),
      );
    }
  });
});
