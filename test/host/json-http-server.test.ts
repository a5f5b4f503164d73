import { createHash } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createJsonHttpServer, type JsonHttpRequest, type JsonHttpServer } from '../../src/host/json-http-server.js';

const servers: JsonHttpServer[] = [];
const sockets: net.Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server that answers every request with what it saw. */
async function echoServer(options: Parameters<typeof createJsonHttpServer>[1] = {}, seen: JsonHttpRequest[] = []): Promise<number> {
  const server = createJsonHttpServer((req) => {
    seen.push(req);
    return { status: req.path === '/missing' ? 404 : 200, body: { method: req.method, path: req.path, body: req.body.toString('utf8') } };
  }, options);
  servers.push(server);
  return server.listen(0, '127.0.0.1');
}

/** A raw TCP client that collects everything the server sends until `until` matches or the socket closes. */
async function rawClient(port: number): Promise<{
  socket: net.Socket;
  send(text: string): void;
  read(until: (all: string) => boolean): Promise<string>;
  closed: Promise<void>;
}> {
  const socket = net.connect({ port, host: '127.0.0.1' });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let all = '';
  const waiters: Array<() => void> = [];
  socket.on('data', (c: Buffer) => {
    all += c.toString('utf8');
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  void closed.then(() => {
    for (const w of waiters.splice(0)) w();
  });
  return {
    socket,
    send: (text) => socket.write(text),
    async read(until) {
      while (!until(all) && !socket.destroyed) await new Promise<void>((resolve) => waiters.push(resolve));
      return all;
    },
    closed,
  };
}

const answers = (all: string): number => all.split('HTTP/1.1 ').length - 1;
const post = (path: string, body: string, extra = ''): string =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

describe('createJsonHttpServer', () => {
  it('answers JSON with Content-Length and keeps the connection for the next request', async () => {
    const port = await echoServer();
    const c = await rawClient(port);
    c.send(post('/a?x=1', '{"n":1}'));
    const first = await c.read((all) => all.endsWith('}'));
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(first).toMatch(/Content-Type: application\/json\r\n/);
    expect(first).toMatch(/Connection: keep-alive\r\n/);
    const body = first.slice(first.indexOf('\r\n\r\n') + 4);
    expect(first).toContain(`Content-Length: ${Buffer.byteLength(body)}\r\n`);
    expect(JSON.parse(body)).toEqual({ method: 'POST', path: '/a', body: '{"n":1}' });
    c.send('GET /b HTTP/1.1\r\nHost: x\r\n\r\n');
    const both = await c.read((all) => answers(all) === 2 && all.endsWith('}'));
    expect(both).toContain('"path":"/b"');
    expect(c.socket.destroyed).toBe(false);
  });

  it('answers pipelined requests in order, one at a time', async () => {
    const server = createJsonHttpServer(async (req) => {
      // The first request is the slowest: its answer must still come first.
      await new Promise((r) => setTimeout(r, req.path === '/1' ? 60 : 1));
      return { status: 200, body: { path: req.path } };
    });
    servers.push(server);
    const c = await rawClient(await server.listen(0, '127.0.0.1'));
    c.send(post('/1', '{}') + post('/2', '{}') + 'GET /3 HTTP/1.1\r\nHost: x\r\n\r\n');
    const all = await c.read((a) => answers(a) === 3 && a.endsWith('}'));
    expect([...all.matchAll(/"path":"(\/\d)"/g)].map((m) => m[1])).toEqual(['/1', '/2', '/3']);
  });

  it('decodes a chunked body and answers Expect: 100-continue before the body is sent', async () => {
    const port = await echoServer();
    const c = await rawClient(port);
    c.send(
      'POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n3;ext=1\r\n[1]\r\n1\r\n}\r\n0\r\nTrailer: t\r\n\r\n',
    );
    expect(await c.read((a) => a.endsWith('}'))).toContain('"body":"{\\"a\\":[1]}"');

    const d = await rawClient(port);
    d.send('POST /d HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n');
    expect(await d.read((a) => a.includes('\r\n\r\n'))).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    d.send('{}');
    expect(await d.read((a) => a.endsWith('}'))).toContain('"body":"{}"');
  });

  it('reads a 24 MB body framed by Content-Length and one framed chunked, each followed by a pipelined request', async () => {
    const server = createJsonHttpServer((req) => ({
      status: 200,
      body: { path: req.path, bytes: req.body.length, sha256: createHash('sha256').update(req.body).digest('hex') },
    }));
    servers.push(server);
    const port = await server.listen(0, '127.0.0.1');
    const big = Buffer.from(JSON.stringify({ items: Array.from({ length: 700_000 }, (_, i) => `item-${i}-${'x'.repeat(i % 50)}`) }));
    expect(big.length).toBeGreaterThan(24 * 1024 * 1024);
    const sha = createHash('sha256').update(big).digest('hex');
    const c = await rawClient(port);
    const small = 'GET /after HTTP/1.1\r\nHost: x\r\n\r\n';
    c.socket.write(`POST /length HTTP/1.1\r\nHost: x\r\nContent-Length: ${big.length}\r\n\r\n`);
    c.socket.write(big);
    c.send(small);
    // Chunks of uneven sizes, so that chunk framing and reads fall at different places.
    c.socket.write('POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
    for (let at = 0, n = 1; at < big.length; n = (n * 7919) % 300_007) {
      const piece = big.subarray(at, at + n + 1);
      c.socket.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]));
      at += piece.length;
    }
    c.send(`0\r\n\r\n${small}`);
    const all = await c.read((text) => answers(text) === 4 && text.endsWith('}'));
    const bodies = all
      .split('HTTP/1.1 ')
      .slice(1)
      .map((a) => JSON.parse(a.slice(a.indexOf('\r\n\r\n') + 4)) as unknown);
    expect(bodies).toEqual([
      { path: '/length', bytes: big.length, sha256: sha },
      { path: '/after', bytes: 0, sha256: createHash('sha256').digest('hex') },
      { path: '/chunked', bytes: big.length, sha256: sha },
      { path: '/after', bytes: 0, sha256: createHash('sha256').digest('hex') },
    ]);
  }, 60_000);

  it('closes after answering Connection: close and HTTP/1.0 requests; HEAD gets no body', async () => {
    const port = await echoServer();
    const c = await rawClient(port);
    c.send('GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await c.closed;
    expect(await c.read(() => true)).toMatch(/Connection: close\r\n\r\n\{"method":"GET"/);

    const d = await rawClient(port);
    d.send('GET /y HTTP/1.0\r\n\r\n');
    await d.closed;
    expect(await d.read(() => true)).toContain('"path":"/y"');

    const h = await rawClient(port);
    h.send('HEAD /z HTTP/1.1\r\nHost: x\r\n\r\n');
    const head = await h.read((a) => a.includes('\r\n\r\n'));
    await new Promise((r) => setTimeout(r, 50));
    expect(head).toMatch(/Content-Length: \d+\r\n/);
    expect(head.endsWith('\r\n\r\n')).toBe(true);
  });

  it('answers a malformed request 400, an oversized body 413 and another HTTP version 505, then closes', async () => {
    const port = await echoServer({ maxBodyBytes: 10 });
    const bad = await rawClient(port);
    bad.send('NOT HTTP AT ALL\r\n\r\n');
    await bad.closed;
    expect(await bad.read(() => true)).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*malformed request line/);

    const big = await rawClient(port);
    big.send(post('/big', '{"x":"0123456789"}'));
    await big.closed;
    expect(await big.read(() => true)).toMatch(/^HTTP\/1\.1 413 [\s\S]*request body over 10 bytes/);

    const v2 = await rawClient(port);
    v2.send('GET / HTTP/2.0\r\n\r\n');
    await v2.closed;
    expect(await v2.read(() => true)).toMatch(/^HTTP\/1\.1 505 /);
  });

  it("aborts a request's signal when its caller hangs up before the answer", async () => {
    let reason: unknown;
    const server = createJsonHttpServer(
      (req) =>
        new Promise((resolve) => {
          req.signal.addEventListener('abort', () => {
            reason = req.signal.reason;
            resolve({ status: 200, body: {} });
          });
        }),
      { callerGone: () => new Error('gone away') },
    );
    servers.push(server);
    const c = await rawClient(await server.listen(0, '127.0.0.1'));
    c.send(post('/wait', '{}'));
    await new Promise((r) => setTimeout(r, 50));
    c.socket.destroy();
    await expect.poll(() => (reason as Error | undefined)?.message).toBe('gone away');
  });

  it('onHangUp calls back once when the caller hangs up before the answer, and not after it', async () => {
    const heard: string[] = [];
    let release: (() => void) | undefined;
    const server = createJsonHttpServer(
      (req) =>
        new Promise((resolve) => {
          req.onHangUp((reason) => heard.push(`${req.path}: ${reason.message}`));
          if (req.path === '/quick') resolve({ status: 200, body: {} });
          else release = () => resolve({ status: 200, body: {} });
        }),
      { callerGone: () => new Error('gone away') },
    );
    servers.push(server);
    const c = await rawClient(await server.listen(0, '127.0.0.1'));
    c.send(post('/quick', '{}'));
    await c.read((a) => a.endsWith('{}'));
    c.send(post('/wait', '{}'));
    await new Promise((r) => setTimeout(r, 50));
    c.socket.destroy();
    await expect.poll(() => heard).toEqual(['/wait: gone away']);
    release?.();
  });

  it('close() drops open connections and is idempotent', async () => {
    const server = createJsonHttpServer(() => ({ status: 200, body: {} }));
    const c = await rawClient(await server.listen(0, '127.0.0.1'));
    await Promise.all([server.close(), server.close()]);
    await c.closed;
    expect(c.socket.destroyed).toBe(true);
  });
});
