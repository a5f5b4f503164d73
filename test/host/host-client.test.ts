import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HostClient } from '../../src/host/host-client.js';
import type { HostCallRequest } from '../../src/core/types.js';

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const req = (x: unknown): HostCallRequest => ({
  function: 'f',
  inputs: { x },
  config: {},
  ctx: { runSeed: 0, episodeIndex: 0, seed: 1, step: 0, episodeKey: 'k', nodeId: 'n' },
});

function client(port: number): HostClient {
  const c = new HostClient(`http://127.0.0.1:${port}`);
  closers.push(() => c.close());
  return c;
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as http.Server).closeAllConnections?.();
      }),
  );
  return (server.address() as net.AddressInfo).port;
}

/** A node:http host stand-in answering /call with the inputs it got, and counting connections. */
async function httpHost(answer: (body: string, res: http.ServerResponse) => void): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = http.createServer((q, res) => {
    const chunks: Buffer[] = [];
    q.on('data', (c: Buffer) => chunks.push(c));
    q.on('end', () => answer(Buffer.concat(chunks).toString('utf8'), res));
  });
  server.on('connection', () => connections++);
  return { port: await listen(server), connections: () => connections };
}

const outputsOf = (body: string): string => JSON.stringify({ outputs: { x: (JSON.parse(body) as HostCallRequest).inputs.x } });

describe('HostClient', () => {
  it('reuses one keep-alive socket for calls in sequence and opens one per concurrent call', async () => {
    const host = await httpHost((body, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(outputsOf(body));
    });
    const c = client(host.port);
    for (let i = 0; i < 5; i++) expect(await c.call(req(i))).toEqual({ x: i });
    expect(host.connections()).toBe(1);
    const outs = await Promise.all([10, 11, 12, 13].map((i) => c.call(req(i))));
    expect(outs.map((o) => o.x)).toEqual([10, 11, 12, 13]);
    expect(host.connections()).toBe(4);
  });

  it('reads chunked answers, and answers that run to the end of the connection', async () => {
    const chunked = await httpHost((body, res) => {
      res.setHeader('content-type', 'application/json');
      const text = outputsOf(body);
      res.write(text.slice(0, 5));
      setTimeout(() => res.end(text.slice(5)), 5);
    });
    expect(await client(chunked.port).call(req('chunks é'))).toEqual({ x: 'chunks é' });

    // An HTTP/1.0-style host: no length, the answer ends when the host closes the socket.
    const raw = net.createServer((s) => {
      let seen = '';
      s.on('data', (c: Buffer) => {
        seen += c.toString('utf8');
        const at = seen.indexOf('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(seen)?.[1] ?? -1);
        if (at < 0 || Buffer.byteLength(seen.slice(at + 4)) < length) return;
        s.end(`HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n${outputsOf(seen.slice(at + 4))}`);
      });
    });
    const c = client(await listen(raw));
    expect(await c.call(req(1))).toEqual({ x: 1 });
    expect(await c.call(req(2))).toEqual({ x: 2 });
  });

  it('reads a 24 MB answer framed by Content-Length, chunked, or by the end of the connection', async () => {
    const outputs = { x: Array.from({ length: 700_000 }, (_, i) => `item-${i}-${'x'.repeat(i % 50)}`) };
    const big = Buffer.from(JSON.stringify({ outputs }));
    expect(big.length).toBeGreaterThan(24 * 1024 * 1024);
    let framing = 'length';
    const host = await httpHost((body, res) => {
      if ((JSON.parse(body) as HostCallRequest).inputs.x === 0) {
        res.setHeader('content-type', 'application/json');
        res.end(outputsOf(body));
        return;
      }
      if (framing === 'length') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': big.length });
        res.end(big);
        return;
      }
      res.writeHead(
        200,
        framing === 'close' ? { 'content-type': 'application/json', connection: 'close' } : { 'content-type': 'application/json' },
      );
      // Uneven writes, so that chunk framing and reads fall at different places.
      for (let at = 0, n = 1; at < big.length; n = (n * 7919) % 300_007) {
        res.write(big.subarray(at, at + n + 1));
        at += n + 1;
      }
      res.end();
    });
    const c = client(host.port);
    for (const f of ['length', 'chunked', 'close']) {
      framing = f;
      expect(await c.call(req(f)), f).toEqual(outputs);
      // The socket is still in step (or replaced after close): a small call after it is answered.
      expect(await c.call(req(0)), `${f}, then a small call`).toEqual({ x: 0 });
    }
  }, 60_000);

  it('sends a call again on a new socket when the host closed the kept-alive one without answering', async () => {
    let served = 0;
    let connections = 0;
    const raw = net.createServer((s) => {
      connections++;
      let seen = '';
      s.on('data', (c: Buffer) => {
        seen += c.toString('utf8');
        const at = seen.indexOf('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(seen)?.[1] ?? 0);
        if (at < 0 || Buffer.byteLength(seen.slice(at + 4)) < length) return;
        const body = seen.slice(at + 4, at + 4 + length);
        seen = '';
        // Every socket answers one call, then hangs up on the next as an idle-timeout race would.
        if ((s as net.Socket & { answered?: boolean }).answered) return void s.destroy();
        (s as net.Socket & { answered?: boolean }).answered = true;
        served++;
        const text = outputsOf(body);
        s.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
      });
    });
    const c = client(await listen(raw));
    expect(await c.call(req('a'))).toEqual({ x: 'a' });
    expect(await c.call(req('b'))).toEqual({ x: 'b' });
    expect(served).toBe(2);
    expect(connections).toBe(2);
  });

  it('reports a host that is gone, or that dies mid-call, as HOST_DIED', async () => {
    const closed = net.createServer();
    const port = await listen(closed);
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(client(port).call(req(1))).rejects.toMatchObject({ code: 'HOST_DIED' });

    const dying = net.createServer((s) => s.on('data', () => s.destroy()));
    await expect(client(await listen(dying)).call(req(1))).rejects.toMatchObject({
      code: 'HOST_DIED',
      message: expect.stringMatching(/is gone/),
    });
  });

  it("rejects with the signal's reason when aborted, and a node error with the host's message", async () => {
    const host = await httpHost((body, res) => {
      const x = (JSON.parse(body) as HostCallRequest).inputs.x;
      if (x === 'slow') return void setTimeout(() => res.end('{}'), 5000);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ error: `no ${String(x)}` }));
    });
    const c = client(host.port);
    const t0 = performance.now();
    await expect(c.call(req('slow'), AbortSignal.timeout(50))).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - t0).toBeLessThan(2000);
    await expect(c.call(req('thing'))).rejects.toMatchObject({ code: 'HOST_ERROR', message: 'no thing' });
    const aborted = AbortSignal.abort(new Error('already'));
    await expect(c.call(req(1), aborted)).rejects.toThrow('already');
  });

  it('close() fails calls in flight as HOST_DIED and refuses new ones; it is idempotent', async () => {
    const host = await httpHost((_body, res) => void setTimeout(() => res.end('{}'), 5000));
    const c = new HostClient(`http://127.0.0.1:${host.port}`);
    const pending = c.call(req(1));
    await new Promise((r) => setTimeout(r, 30));
    c.close();
    c.close();
    await expect(pending).rejects.toMatchObject({ code: 'HOST_DIED' });
    await expect(c.health()).rejects.toMatchObject({ code: 'HOST_ERROR', message: expect.stringMatching(/is closed/) });
  });
});

describe('HostClient with a host that writes NaN and Infinity as bare tokens', () => {
  it('reads them as null and names them in $nonFinite, as the Node host does', async () => {
    // What Python's json.dumps writes for float('nan') and float('inf') by default.
    const host = await httpHost((_body, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        '{"outputs": {"metrics": {"success": 0, "distance": Infinity, "note": "NaN stays text"}, "reward": NaN, "trace": [-Infinity, 1]}}',
      );
    });
    expect(await client(host.port).call(req(0))).toEqual({
      metrics: { success: 0, distance: null, note: 'NaN stays text' },
      reward: null,
      trace: [null, 1],
      $nonFinite: [
        { port: 'metrics', key: 'distance', value: 'Infinity' },
        { port: 'reward', value: 'NaN' },
      ],
    });
  });

  it('still refuses an answer that is not JSON otherwise', async () => {
    const host = await httpHost((_body, res) => res.end('{"outputs": {"x": NaN, oops}}'));
    await expect(client(host.port).call(req(0))).rejects.toThrow(/answered HTTP 200 with non-JSON/);
  });
});
