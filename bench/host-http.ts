/**
 * The host's own HTTP/1.1 client and server beside undici and node:http, in one run: a 32 MB
 * answer through each client and a 32 MB request into each server (content-length and chunked
 * framing; median of a few), then the small call both are kept for (p50 and CPU per call).
 * Run alone: `node --import tsx bench/host-http.ts`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import { HostClient } from '../src/host/host-client.js';
import { createJsonHttpServer } from '../src/host/json-http-server.js';

const BIG_BYTES = 32 * 1024 * 1024;
const BIG_REPS = 5;
const SMALL_CALLS = 5_000;
const SMALL_WARMUP = 1_000;
const PIECE = 64 * 1024;
/** What "within 2×" of the library means in the table. */
const TARGET_RATIO = 2;

/** A JSON document of about `bytes` bytes: one object holding a long array of short strings. */
function bigJson(bytes: number): string {
  const item = '"abcdefghijklmnopqrstuvwxyz0123456789"';
  const n = Math.floor(bytes / (item.length + 1));
  return `{"items":[${Array.from({ length: n }, () => item).join(',')}]}`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function timeMs(reps: number, once: () => Promise<unknown>): Promise<number> {
  await once();
  const ms: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await once();
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

/** p50 latency (µs) and this process's CPU per call (µs, user + system). */
async function smallCalls(once: () => Promise<unknown>): Promise<{ p50: number; cpu: number }> {
  for (let i = 0; i < SMALL_WARMUP; i++) await once();
  const us: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < SMALL_CALLS; i++) {
    const t0 = process.hrtime.bigint();
    await once();
    us.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  const cpu = process.cpuUsage(cpu0);
  return { p50: median(us), cpu: (cpu.user + cpu.system) / SMALL_CALLS };
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function table(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  return all.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')).join('\n');
}

const fmt = (n: number, digits = 1): string => n.toFixed(digits);
const verdict = (ratio: number): string => (ratio <= TARGET_RATIO ? 'met' : 'MISSED');

export async function benchHostHttp(): Promise<void> {
  const big = Buffer.from(bigJson(BIG_BYTES));
  const small = Buffer.from('{"outputs":{"x":1}}');
  const closers: Array<() => Promise<void> | void> = [];
  try {
    // ------------------------------------------------ answers: one node:http server, two clients
    // HostClient's GET routes are fixed, so /manifest stands for a content-length answer and /health for a chunked one.
    const answerServer = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/health') {
          // No length: node:http frames it chunked, one chunk per write.
          res.writeHead(200, { 'content-type': 'application/json' });
          for (let at = 0; at < big.length; at += PIECE) res.write(big.subarray(at, at + PIECE));
          res.end();
        } else {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': big.length });
          res.end(big);
        }
      });
    });
    const answerPort = await listen(answerServer);
    closers.push(
      () => new Promise<void>((resolve) => answerServer.close(() => resolve())),
      () => answerServer.closeAllConnections(),
    );
    const answerUrl = `http://127.0.0.1:${answerPort}`;
    const client = new HostClient(answerUrl, { secret: '' });
    closers.push(() => client.close());
    const viaHostClient = (path: '/manifest' | '/health'): Promise<unknown> => (path === '/manifest' ? client.manifest() : client.health());
    const viaUndici = async (path: string): Promise<unknown> => (await request(`${answerUrl}${path}`)).body.json();

    const answerRows: string[][] = [];
    for (const [label, path] of [
      ['32 MB answer, content-length', '/manifest'],
      ['32 MB answer, chunked', '/health'],
    ] as const) {
      const ours = await timeMs(BIG_REPS, () => viaHostClient(path));
      const theirs = await timeMs(BIG_REPS, () => viaUndici(path));
      answerRows.push([label, fmt(ours), fmt(theirs), `${fmt(ours / theirs, 2)}×`, verdict(ours / theirs)]);
    }
    console.log(`Answers into the client: ms per request (median of ${BIG_REPS}; JSON parsed on both sides)`);
    console.log(table(['', 'HostClient', 'undici', 'ratio', `target ≤ ${TARGET_RATIO}×`], answerRows));

    // ------------------------------------------------ requests: two servers, one client (undici)
    const parsedBytes = (body: Buffer): { n: number } => {
      const doc = JSON.parse(body.toString('utf8')) as { items?: unknown[] };
      return { n: doc.items?.length ?? 0 };
    };
    const ourServer = createJsonHttpServer((req) => ({ status: 200, body: parsedBytes(req.body) }));
    const ourPort = await ourServer.listen(0, '127.0.0.1');
    closers.push(() => ourServer.close());
    const nodeServer = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const json = JSON.stringify(parsedBytes(Buffer.concat(parts)));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
        res.end(json);
      });
    });
    const nodePort = await listen(nodeServer);
    closers.push(
      () => new Promise<void>((resolve) => nodeServer.close(() => resolve())),
      () => nodeServer.closeAllConnections(),
    );
    const post = async (port: number, chunked: boolean): Promise<unknown> => {
      const body = chunked
        ? Readable.from(
            (function* () {
              for (let at = 0; at < big.length; at += PIECE) yield big.subarray(at, at + PIECE);
            })(),
          )
        : big;
      const res = await request(`http://127.0.0.1:${port}/call`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      const out = (await res.body.json()) as { n?: number };
      if (res.statusCode !== 200 || !out.n) throw new Error(`POST answered ${res.statusCode} ${JSON.stringify(out)}`);
      return out;
    };
    const requestRows: string[][] = [];
    for (const [label, chunked] of [
      ['32 MB request, content-length', false],
      ['32 MB request, chunked', true],
    ] as const) {
      const ours = await timeMs(BIG_REPS, () => post(ourPort, chunked));
      const theirs = await timeMs(BIG_REPS, () => post(nodePort, chunked));
      requestRows.push([label, fmt(ours), fmt(theirs), `${fmt(ours / theirs, 2)}×`, verdict(ours / theirs)]);
    }
    console.log(`\nRequests into the server: ms per request, sent by undici (median of ${BIG_REPS}; JSON.parse on both sides)`);
    console.log(table(['', 'JsonHttpServer', 'node:http', 'ratio', `target ≤ ${TARGET_RATIO}×`], requestRows));

    // ------------------------------------------------ small calls
    const tinyServer = createJsonHttpServer(() => ({ status: 200, json: '{"outputs":{"x":1}}' }));
    const tinyPort = await tinyServer.listen(0, '127.0.0.1');
    closers.push(() => tinyServer.close());
    const tinyHostClient = new HostClient(`http://127.0.0.1:${tinyPort}`, { secret: '' });
    closers.push(() => tinyHostClient.close());
    const tinyNode = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': small.length });
        res.end(small);
      });
    });
    const tinyNodePort = await listen(tinyNode);
    closers.push(
      () => new Promise<void>((resolve) => tinyNode.close(() => resolve())),
      () => tinyNode.closeAllConnections(),
    );
    const tinyNodeClient = new HostClient(`http://127.0.0.1:${tinyNodePort}`, { secret: '' });
    closers.push(() => tinyNodeClient.close());
    const callReq = {
      function: 'echo',
      inputs: { x: 1 },
      config: {},
      ctx: { runSeed: 0, episodeIndex: 0, seed: 0, step: 0, episodeKey: 'b', nodeId: 'n' },
    };
    const callBody = JSON.stringify(callReq);

    const hostClientSmall = await smallCalls(() => tinyHostClient.call(callReq));
    const undiciSmall = await smallCalls(async () => {
      const res = await request(`http://127.0.0.1:${tinyPort}/call`, {
        method: 'POST',
        body: callBody,
        headers: { 'content-type': 'application/json' },
      });
      return res.body.json();
    });
    const nodeServerSmall = await smallCalls(() => tinyNodeClient.call(callReq));
    console.log(`\nSmall calls, client and server in this process (${SMALL_CALLS} one after another; CPU is this process's, both ends)`);
    console.log(
      table(
        ['', 'p50 µs', 'CPU µs/call'],
        [
          ['HostClient → JsonHttpServer', fmt(hostClientSmall.p50), fmt(hostClientSmall.cpu)],
          ['undici → JsonHttpServer', fmt(undiciSmall.p50), fmt(undiciSmall.cpu)],
          ['HostClient → node:http', fmt(nodeServerSmall.p50), fmt(nodeServerSmall.cpu)],
        ],
      ),
    );
  } finally {
    for (const close of closers.reverse()) await close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchHostHttp().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
