/**
 * A small HTTP/1.1 server for JSON requests and answers, on node:net: what a host needs and
 * no more. Each connection is served one request at a time (pipelined requests wait their
 * turn), bodies framed by Content-Length or chunked coding, keep-alive by default, and the
 * request's signal aborts when its caller hangs up before the answer. node:http's server does
 * the same through a stack of streams whose CPU cost per request is several times this one's,
 * which a host answering every step of every episode pays on each call.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ChunkedDecoder, joinParts } from './chunked-body.js';
import { presentsSecret } from './host-secret.js';

export interface JsonHttpRequest {
  method: string;
  /** The request target without its query string. */
  path: string;
  /** The body: the bytes read off a socket, or the JSON text of an in-process call (empty when there is none). */
  body: Buffer | string;
  /** Aborts when the connection closes before the answer is written. Made on first use. */
  readonly signal: AbortSignal;
  /**
   * Calls `cb` once when the connection closes before the answer is written (at once when it
   * already has). The cheap way to hear of it: no AbortController, no event listener.
   */
  onHangUp(cb: (reason: Error) => void): void;
}

export interface JsonHttpAnswer {
  status: number;
  /** Serialised with JSON.stringify unless `json` is given. */
  body?: unknown;
  /** The body, already serialised. */
  json?: string;
}

/** What the server hands a handler: a request whose body is the bytes read off the socket. */
export type JsonHttpHandler = (req: JsonHttpRequest & { body: Buffer }) => Promise<JsonHttpAnswer> | JsonHttpAnswer;

export interface JsonHttpServerOptions {
  /** Largest request body accepted; a larger one is answered 413. @default 64 MiB */
  maxBodyBytes?: number;
  /** An idle keep-alive connection is closed after this long. @default 60000 */
  keepAliveMs?: number;
  /** Builds the reason a request's signal aborts with when its caller hangs up. */
  callerGone?: () => Error;
  /**
   * When set, a request must carry `Authorization: Bearer <secret>`; any other is answered
   * 401 before its body is read, and its connection closed. @default no check
   */
  secret?: string;
}

export interface JsonHttpServer {
  /** Listens on `host`; resolves with the port (0 = chosen by the OS). */
  listen(port: number, host: string): Promise<number>;
  /** Stops listening and drops every connection. Idempotent. */
  close(): Promise<void>;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const MAX_HEAD_BYTES = 64 * 1024;
const REASONS: Record<number, string> = {
  100: 'Continue',
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  505: 'HTTP Version Not Supported',
};

let dateSecond = -1;
let dateText = '';
/** The Date header's value, formatted once a second. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

interface Head {
  method: string;
  path: string;
  /** Body length, -1 for chunked. */
  length: number;
  keepAlive: boolean;
  expectContinue: boolean;
  authorization: string | undefined;
}

class HeadError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function parseHead(text: string, maxBody: number): Head {
  const lines = text.split('\r\n');
  const m = /^([A-Z]+) (\S+) HTTP\/1\.([01])$/.exec(lines[0] ?? '');
  if (!m) {
    if (/^[A-Z]+ \S+ HTTP\/\d/.test(lines[0] ?? '')) throw new HeadError(505, 'only HTTP/1.0 and HTTP/1.1 are spoken');
    throw new HeadError(400, `malformed request line ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`);
  }
  let keepAlive = m[3] === '1';
  let length = 0;
  let lengthSeen: string | undefined;
  let chunked = false;
  let expectContinue = false;
  let authorization: string | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new HeadError(400, `malformed header line ${JSON.stringify(line.slice(0, 80))}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    switch (name) {
      case 'content-length':
        if (!/^\d{1,15}$/.test(value) || (lengthSeen !== undefined && lengthSeen !== value))
          throw new HeadError(400, `bad Content-Length ${JSON.stringify(value)}`);
        lengthSeen = value;
        length = Number(value);
        break;
      case 'transfer-encoding': {
        const codings = value
          .toLowerCase()
          .split(',')
          .map((t) => t.trim());
        if (codings[codings.length - 1] !== 'chunked' || codings.some((c) => c !== 'chunked' && c !== 'identity')) {
          throw new HeadError(501, `transfer coding ${JSON.stringify(value)} is not supported`);
        }
        chunked = true;
        break;
      }
      case 'connection': {
        const tokens = value
          .toLowerCase()
          .split(',')
          .map((t) => t.trim());
        if (tokens.includes('close')) keepAlive = false;
        else if (tokens.includes('keep-alive')) keepAlive = true;
        break;
      }
      case 'expect':
        expectContinue = value.toLowerCase() === '100-continue';
        break;
      case 'authorization':
        authorization = value;
        break;
    }
  }
  if (chunked) {
    length = -1;
    // Both framings given: the chunked one is read, and the connection is not trusted after it.
    if (lengthSeen !== undefined) keepAlive = false;
  } else if (length > maxBody) {
    throw new HeadError(413, `request body over ${maxBody} bytes`);
  }
  const target = m[2]!;
  const q = target.indexOf('?');
  return { method: m[1]!, path: q < 0 ? target : target.slice(0, q), length, keepAlive, expectContinue, authorization };
}

class Connection {
  /** Bytes received and not yet read: what arrived while a request was being served. */
  #queue: Buffer[] = [];
  /** Bytes of a request head not complete yet. */
  #headBuf: Buffer | undefined;
  #head: Head | undefined;
  /** The body of the current request so far (Content-Length framing), joined once it is complete. */
  #parts: Buffer[] = [];
  #bytes = 0;
  #chunked: ChunkedDecoder | undefined;
  #busy = false;
  #draining = false;
  /** No further request is read: the last one asked to close, or the stream went bad. */
  #stopped = false;
  #closed = false;
  #continued = false;
  #abort: AbortController | undefined;
  #hangUp: Array<(reason: Error) => void> | undefined;

  constructor(
    readonly socket: net.Socket,
    private readonly handler: JsonHttpHandler,
    private readonly options: Required<Omit<JsonHttpServerOptions, 'secret'>> & { secret?: string },
    private readonly onClose: (c: Connection) => void,
  ) {
    socket.setNoDelay(true);
    socket.setTimeout(options.keepAliveMs, () => {
      if (!this.#busy) socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => {
      this.#queue.push(chunk);
      this.#drain();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.#closed = true;
      if (this.#abort || this.#hangUp) {
        const reason = options.callerGone();
        this.#abort?.abort(reason);
        const hangUp = this.#hangUp;
        this.#hangUp = undefined;
        if (hangUp) for (const cb of hangUp) cb(reason);
      }
      this.onClose(this);
    });
  }

  /** Reads queued bytes while no request is being served; a complete request is served. */
  #drain(): void {
    // An answer given synchronously drains again from within #serve: the outer loop carries on instead.
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (!this.#busy && !this.#stopped && !this.#closed && this.#queue.length > 0) this.#read(this.#queue.shift()!);
    } finally {
      this.#draining = false;
    }
  }

  /** Reads the next bytes of the stream; what follows a complete request goes back to the queue. */
  #read(chunk: Buffer): void {
    try {
      let head = this.#head;
      if (!head) {
        // A head is small (MAX_HEAD_BYTES), so joining its pieces as they come stays cheap.
        const buf = this.#headBuf === undefined ? chunk : Buffer.concat([this.#headBuf, chunk]);
        // Empty lines before a request line are ignored (RFC 9112 §2.2).
        let start = 0;
        while (buf[start] === 0x0d && buf[start + 1] === 0x0a) start += 2;
        const end = buf.indexOf(HEAD_END, start);
        if (end < 0) {
          if (buf.length - start > MAX_HEAD_BYTES) throw new HeadError(431, `request head over ${MAX_HEAD_BYTES} bytes`);
          this.#headBuf = buf.subarray(start);
          return;
        }
        this.#headBuf = undefined;
        head = parseHead(buf.toString('latin1', start, end), this.options.maxBodyBytes);
        const secret = this.options.secret;
        if (secret !== undefined && !presentsSecret(head.authorization, secret))
          throw new HeadError(401, 'this host answers only its callers: send "Authorization: Bearer <its secret>"');
        this.#head = head;
        this.#continued = false;
        this.#parts = [];
        this.#bytes = 0;
        this.#chunked = head.length < 0 ? new ChunkedDecoder() : undefined;
        chunk = buf.subarray(end + 4);
      }
      let body: Buffer;
      let rest: Buffer;
      if (this.#chunked) {
        const end = this.#chunked.push(chunk);
        if (end === 'bad') throw new HeadError(400, 'malformed chunked body');
        if (this.#chunked.size > this.options.maxBodyBytes)
          throw new HeadError(413, `request body over ${this.options.maxBodyBytes} bytes`);
        if (end === undefined) {
          this.#sendContinue(head);
          return;
        }
        body = this.#chunked.body();
        rest = chunk.subarray(end);
      } else {
        const need = head.length - this.#bytes;
        if (chunk.length < need) {
          if (chunk.length > 0) this.#parts.push(chunk);
          this.#bytes += chunk.length;
          this.#sendContinue(head);
          return;
        }
        if (need > 0) this.#parts.push(chunk.subarray(0, need));
        body = joinParts(this.#parts, head.length);
        rest = chunk.subarray(need);
      }
      this.#head = undefined;
      this.#parts = [];
      this.#chunked = undefined;
      if (rest.length > 0) this.#queue.unshift(rest);
      if (!head.keepAlive) this.#stopped = true;
      this.#serve(head, body);
    } catch (err) {
      if (!(err instanceof HeadError)) throw err;
      // The stream cannot be trusted after a bad head: answer and close.
      this.#head = undefined;
      this.#headBuf = undefined;
      this.#parts = [];
      this.#chunked = undefined;
      this.#queue = [];
      this.#stopped = true;
      this.#write(err.status, JSON.stringify({ error: err.message }), false, false);
    }
  }

  #sendContinue(head: Head): void {
    if (head.expectContinue && !this.#continued) {
      this.#continued = true;
      this.socket.write('HTTP/1.1 100 Continue\r\n\r\n');
    }
  }

  #serve(head: Head, body: Buffer): void {
    this.#busy = true;
    this.#abort = undefined;
    this.#hangUp = undefined;
    const conn = this;
    const req: JsonHttpRequest & { body: Buffer } = {
      method: head.method,
      path: head.path,
      body,
      get signal(): AbortSignal {
        conn.#abort ??= new AbortController();
        if (conn.#closed && !conn.#abort.signal.aborted) conn.#abort.abort(conn.options.callerGone());
        return conn.#abort.signal;
      },
      onHangUp(cb) {
        if (conn.#closed) cb(conn.options.callerGone());
        else {
          conn.#hangUp ??= [];
          conn.#hangUp.push(cb);
        }
      },
    };
    let answer: Promise<JsonHttpAnswer> | JsonHttpAnswer;
    try {
      answer = this.handler(req);
    } catch (err) {
      answer = Promise.reject(err);
    }
    if (answer instanceof Promise) {
      answer.then(
        (a) => this.#answer(head, a),
        (err: unknown) => this.#answer(head, { status: 500, body: { error: err instanceof Error ? err.message : String(err) } }),
      );
    } else {
      this.#answer(head, answer);
    }
  }

  #answer(head: Head, a: JsonHttpAnswer): void {
    this.#abort = undefined;
    this.#hangUp = undefined;
    this.#busy = false;
    if (this.#closed) return;
    let json: string;
    try {
      json = a.json ?? JSON.stringify(a.body ?? null);
    } catch (err) {
      json = JSON.stringify({ error: `the answer could not be serialised: ${err instanceof Error ? err.message : String(err)}` });
      a = { status: 500 };
    }
    this.#write(a.status, json, head.keepAlive, head.method === 'HEAD');
    if (head.keepAlive) this.#drain();
  }

  #write(status: number, json: string, keepAlive: boolean, headOnly: boolean): void {
    const text =
      `HTTP/1.1 ${status} ${REASONS[status] ?? 'Unknown'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
      `Date: ${httpDate()}\r\n${keepAlive ? `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(this.options.keepAliveMs / 1000)}` : 'Connection: close'}\r\n\r\n` +
      (headOnly ? '' : json);
    if (keepAlive) this.socket.write(text);
    else this.socket.end(text);
  }
}

export function createJsonHttpServer(handler: JsonHttpHandler, options: JsonHttpServerOptions = {}): JsonHttpServer {
  const opts: Required<Omit<JsonHttpServerOptions, 'secret'>> & { secret?: string } = {
    maxBodyBytes: options.maxBodyBytes ?? 64 * 1024 * 1024,
    keepAliveMs: options.keepAliveMs ?? 60_000,
    callerGone: options.callerGone ?? (() => new Error('the caller went away')),
    ...(options.secret !== undefined ? { secret: options.secret } : {}),
  };
  const connections = new Set<Connection>();
  const server = net.createServer((socket) => {
    connections.add(new Connection(socket, handler, opts, (c) => connections.delete(c)));
  });
  let closing: Promise<void> | undefined;
  return {
    listen(port, host) {
      return new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve((server.address() as AddressInfo).port);
        });
      });
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        if (!server.listening) resolve();
        else server.close(() => resolve());
        for (const c of connections) c.socket.destroy();
        connections.clear();
      });
      return closing;
    },
  };
}
