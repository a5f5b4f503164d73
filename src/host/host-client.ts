/**
 * HostClient: the caller's side of the host protocol (docs/host-protocol.md): HTTP/1.1 over
 * its own keep-alive TCP sockets, one request at a time per socket. It speaks only what the
 * protocol needs (a JSON body each way, answers framed by Content-Length, chunked encoding or
 * the end of the connection), so a call on loopback costs one write and one read on an open
 * socket and little else; node:http's client machinery cost several times more CPU per call,
 * which an eval process driving many workers pays on every step.
 */
import net from 'node:net';
import { HostDiedError, HostError, errorMessage } from '../errors.js';
import type { HostStats } from './host.js';
import type { HostCallRequest, HostHealth, NodeOutputs, NodesetManifest, PanelLoadResult, PanelState, PanelValues } from '../core/types.js';
import { ChunkedDecoder, joinParts } from './chunked-body.js';
import { hostSecretFor } from './host-secret.js';
import { parseWithNonFinite } from './non-finite.js';
import { whenAborted } from './abort-fanout.js';
import { answerText, inProcessCall, inProcessHost, isInProcessUrl } from './in-process-hosts.js';
import type { JsonHttpAnswer } from './json-http-server.js';

/** Socket errors that mean nobody is listening any more: the host exited or was killed. */
const DEAD_HOST_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Sockets open to one host at most; further requests wait for one to be free. */
export const MAX_SOCKETS = 256;
/** An idle socket older than this is closed rather than reused, well before a host's own idle timeout. */
const IDLE_REUSE_MS = 4000;
const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEAD_BYTES = 64 * 1024;
const NO_BYTES = Buffer.alloc(0);

interface RawResponse {
  status: number;
  body: unknown;
}

/** A socket closed or failed before its answer was complete. */
class ConnectionLost extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    /** No byte of the answer had arrived (a reused socket the host was closing: safe to send again). */
    readonly beforeAnswer: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

interface Exchange {
  resolve(res: { status: number; text: string }): void;
  reject(err: Error): void;
}

/** One keep-alive socket and the parser of the answer it is waiting for. */
class Connection {
  readonly socket: net.Socket;
  /** Requests sent on this socket before the current one. */
  uses = 0;
  idleSince = 0;
  #exchange: Exchange | undefined;
  /** Bytes of an answer head not complete yet; undefined once the head is read. */
  #head: Buffer | undefined;
  /** Body bytes received so far, joined once when the body is complete. */
  #parts: Buffer[] = [];
  #bytes = 0;
  /** Parsed head of the current answer, once its header block is complete. */
  #status = 0;
  #length = -1;
  #chunked: ChunkedDecoder | undefined;
  #keepAlive = true;
  #received = false;
  #dead = false;

  constructor(
    host: string,
    port: number,
    private readonly onGone: (c: Connection) => void,
  ) {
    this.socket = net.connect({ host, port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    this.socket.on('error', (err: NodeJS.ErrnoException) =>
      this.#fail(new ConnectionLost(errorMessage(err), err.code, !this.#received, { cause: err })),
    );
    this.socket.on('end', () => this.#onEnd());
    this.socket.on('close', () => this.#fail(new ConnectionLost('socket hang up', 'ECONNRESET', !this.#received)));
  }

  get dead(): boolean {
    return this.#dead;
  }

  send(head: string, exchange: Exchange): void {
    this.#exchange = exchange;
    this.#head = NO_BYTES;
    this.#parts = [];
    this.#bytes = 0;
    this.#status = 0;
    this.#received = false;
    this.socket.ref();
    this.socket.write(head);
  }

  /** Drops the socket; a pending exchange fails with `err`. */
  destroy(err?: Error): void {
    if (err) this.#fail(err);
    this.#dead = true;
    this.socket.destroy();
  }

  #fail(err: ConnectionLost | Error): void {
    const was = this.#dead;
    this.#dead = true;
    const ex = this.#exchange;
    this.#exchange = undefined;
    if (!was) {
      this.socket.destroy();
      this.onGone(this);
    }
    ex?.reject(err);
  }

  #onData(chunk: Buffer): void {
    if (!this.#exchange) {
      // Bytes nobody asked for: the stream is out of step, so it cannot be reused.
      this.#fail(new ConnectionLost('unexpected data from the host', 'EPROTO', false));
      return;
    }
    this.#received = true;
    if (this.#head !== undefined) {
      // A head is small (MAX_HEAD_BYTES), so joining its pieces as they come stays cheap.
      let buf = this.#head.length === 0 ? chunk : Buffer.concat([this.#head, chunk]);
      for (;;) {
        const end = buf.indexOf(HEADER_END);
        if (end < 0) {
          if (buf.length > MAX_HEAD_BYTES) {
            this.#fail(new ConnectionLost(`answer head over ${MAX_HEAD_BYTES} bytes`, 'EPROTO', false));
            return;
          }
          this.#head = buf;
          return;
        }
        if (!this.#readHead(buf.toString('latin1', 0, end))) return;
        buf = buf.subarray(end + 4);
        // An interim answer (100 Continue): the real one follows.
        if (this.#status < 100 || this.#status >= 200) break;
      }
      this.#head = undefined;
      chunk = buf;
    }
    this.#readBody(chunk);
  }

  #onEnd(): void {
    // Without Content-Length or chunked encoding, the answer runs to the end of the connection.
    if (this.#exchange && this.#head === undefined && this.#length < 0 && !this.#chunked) {
      this.#keepAlive = false;
      this.#finish(joinParts(this.#parts, this.#bytes), true);
      return;
    }
    this.#fail(new ConnectionLost('socket hang up', 'ECONNRESET', !this.#received));
  }

  /** Takes the next bytes of the body; answers the exchange once the body is complete. */
  #readBody(chunk: Buffer): void {
    let body: Buffer;
    if (this.#chunked) {
      const end = this.#chunked.push(chunk);
      if (end === 'bad') {
        this.#fail(new ConnectionLost('malformed chunked answer', 'EPROTO', false));
        return;
      }
      if (end === undefined) return;
      if (end !== chunk.length) this.#keepAlive = false;
      body = this.#chunked.body();
    } else if (this.#length >= 0) {
      if (chunk.length > 0) this.#parts.push(chunk);
      this.#bytes += chunk.length;
      if (this.#bytes < this.#length) return;
      if (this.#bytes > this.#length) this.#keepAlive = false;
      body = joinParts(this.#parts, this.#bytes).subarray(0, this.#length);
    } else if (this.#status === 204 || this.#status === 304) {
      body = Buffer.alloc(0);
    } else {
      if (chunk.length > 0) this.#parts.push(chunk);
      this.#bytes += chunk.length;
      return;
    }
    this.#finish(body, false);
  }

  #finish(body: Buffer, ended: boolean): void {
    const ex = this.#exchange!;
    this.#exchange = undefined;
    this.#parts = [];
    this.#chunked = undefined;
    const status = this.#status;
    if (this.#keepAlive && !ended) {
      this.uses++;
      this.idleSince = performance.now();
      this.socket.unref();
      this.onGone(this);
    } else {
      this.#dead = true;
      this.socket.destroy();
      this.onGone(this);
    }
    ex.resolve({ status, text: body.toString('utf8') });
  }

  /** Reads the status line and the headers that frame the body; false when the head is not HTTP. */
  #readHead(head: string): boolean {
    const lines = head.split('\r\n');
    const m = /^HTTP\/1\.([01]) (\d{3})/.exec(lines[0] ?? '');
    if (!m) {
      this.#fail(new ConnectionLost(`not an HTTP answer: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`, 'EPROTO', false));
      return false;
    }
    this.#status = Number(m[2]);
    this.#length = -1;
    let chunked = false;
    let keepAlive = m[1] === '1';
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line
        .slice(colon + 1)
        .trim()
        .toLowerCase();
      if (name === 'content-length') this.#length = Number.parseInt(value, 10);
      else if (name === 'transfer-encoding') chunked = value.split(',').some((t) => t.trim() === 'chunked');
      else if (name === 'connection') {
        const tokens = value.split(',').map((t) => t.trim());
        if (tokens.includes('close')) keepAlive = false;
        else if (tokens.includes('keep-alive')) keepAlive = true;
      }
    }
    this.#chunked = chunked ? new ChunkedDecoder() : undefined;
    if (chunked) this.#length = -1;
    else if (!Number.isFinite(this.#length) || this.#length < 0) this.#length = -1;
    // No framing: the body ends with the connection.
    if (!chunked && this.#length < 0 && this.#status !== 204 && this.#status !== 304) keepAlive = false;
    this.#keepAlive = keepAlive;
    return true;
  }
}

export class HostClient {
  readonly baseUrl: string;
  private readonly host: string;
  private readonly port: number;
  private readonly hostHeader: string;
  /** `Authorization: …\r\n` presenting the host's secret, or '' for a host without one. */
  private readonly authHeader: string;
  /** Free keep-alive sockets, the most recently used last. */
  private readonly idle: Connection[] = [];
  private readonly busy = new Set<Connection>();
  /** Requests waiting for a socket while MAX_SOCKETS are busy. */
  private readonly waiting: Array<() => void> = [];
  private closed = false;
  /** The host lives in this process: requests go to its handler, not over a socket. */
  private readonly inProcess: boolean = false;
  /** In-process requests not answered yet: close() fails them, as it fails the exchanges on its sockets. */
  private readonly pendingInProcess = new Set<(err: Error) => void>();

  /**
   * `secret`: what the host requires in `Authorization: Bearer …`. @default the secret this
   * process holds for the URL (every host it spawned or was lent), else none (a remote host)
   */
  constructor(baseUrl: string, options: { secret?: string } = {}) {
    if (isInProcessUrl(baseUrl)) {
      // Served by this process (in-process-hosts.ts): no socket, no secret.
      this.baseUrl = baseUrl;
      this.host = '';
      this.port = 0;
      this.hostHeader = '';
      this.authHeader = '';
      this.inProcess = true;
      return;
    }
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch (err) {
      throw new HostError(`invalid host URL "${baseUrl}"`, { cause: err });
    }
    if (url.protocol !== 'http:') throw new HostError(`invalid host URL "${baseUrl}": only http:// is spoken`);
    this.baseUrl = url.origin;
    this.host = url.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(url.port || 80);
    this.hostHeader = url.host;
    const secret = options.secret ?? hostSecretFor(this.baseUrl);
    this.authHeader = secret ? `Authorization: Bearer ${secret}\r\n` : '';
  }

  manifest(signal?: AbortSignal): Promise<NodesetManifest> {
    return this.json<NodesetManifest>('GET', '/manifest', undefined, signal);
  }

  health(signal?: AbortSignal): Promise<HostHealth> {
    return this.json<HostHealth>('GET', '/health', undefined, signal);
  }

  /** Counters of a Node host (calls, batches); other hosts may not serve it. */
  stats(signal?: AbortSignal): Promise<HostStats> {
    return this.json<HostStats>('GET', '/stats', undefined, signal);
  }

  /** Calls one function; resolves with its outputs. A node failure throws HostError, a gone host HostDiedError. */
  async call(req: HostCallRequest, signal?: AbortSignal): Promise<NodeOutputs> {
    const body = await this.json<{ outputs?: NodeOutputs }>('POST', '/call', req, signal);
    if (!body || typeof body.outputs !== 'object' || body.outputs === null) {
      throw new HostError(`host ${this.baseUrl}: /call for "${req.function}" answered without "outputs"`);
    }
    return body.outputs;
  }

  panel(signal?: AbortSignal): Promise<PanelState> {
    return this.json<PanelState>('GET', '/panel', undefined, signal);
  }

  panelField(field: string, value: string | number, signal?: AbortSignal): Promise<PanelState> {
    return this.json<PanelState>('POST', '/panel/field', { field, value }, signal);
  }

  panelAction(action: string, signal?: AbortSignal): Promise<PanelState> {
    return this.json<PanelState>('POST', '/panel/action', { action }, signal);
  }

  /** Loads the episode selected on the panel, or the one `values` select (leaving the panel state alone). */
  panelLoad(episodeKey: string, signal?: AbortSignal, values?: PanelValues): Promise<PanelLoadResult> {
    return this.json<PanelLoadResult>('POST', '/panel/load', values ? { episodeKey, values } : { episodeKey }, signal);
  }

  /** The expected cost of each selected episode (null where unknown); null when the env gives none. */
  async panelCosts(selections: PanelValues[], signal?: AbortSignal): Promise<Array<number | null> | null> {
    const body = await this.json<{ costs?: unknown }>('POST', '/panel/costs', { selections }, signal);
    const costs = body?.costs;
    if (!Array.isArray(costs) || costs.length !== selections.length) return null;
    return costs.map((c) => (typeof c === 'number' && Number.isFinite(c) ? c : null));
  }

  async evict(episodeKey: string, signal?: AbortSignal): Promise<void> {
    await this.json('POST', '/evict', { episodeKey }, signal);
  }

  async releaseCaller(callerId: string, signal?: AbortSignal): Promise<void> {
    await this.json('POST', '/callers/release', { callerId }, signal);
  }

  /** Drops the keep-alive sockets; requests in flight fail. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    // A call cut off by close() reads as a host that went away: its answer will never come.
    for (const c of [...this.idle, ...this.busy])
      c.destroy(new ConnectionLost(`the client of ${this.baseUrl} was closed`, 'ECONNRESET', false));
    this.idle.length = 0;
    this.busy.clear();
    for (const wake of this.waiting.splice(0)) wake();
    for (const fail of [...this.pendingInProcess])
      fail(new ConnectionLost(`the client of ${this.baseUrl} was closed`, 'ECONNRESET', false));
    this.pendingInProcess.clear();
  }

  private async json<T>(method: 'GET' | 'POST', path: string, payload: unknown, signal?: AbortSignal): Promise<T> {
    if (this.closed) throw new HostError(`host client for ${this.baseUrl} is closed`);
    const data = payload === undefined ? undefined : JSON.stringify(payload);
    let res: RawResponse;
    try {
      res = await this.request(method, path, data, signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (err instanceof HostError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== undefined && DEAD_HOST_CODES.has(code)) {
        throw new HostDiedError(`host ${this.baseUrl} is gone (${method} ${path}: ${errorMessage(err)})`, { cause: err });
      }
      throw new HostError(`host ${this.baseUrl}: ${method} ${path} failed: ${errorMessage(err)}`, { cause: err });
    }
    const body = res.body as { error?: unknown } | null;
    if (body !== null && typeof body === 'object' && 'error' in body && body.error !== undefined) {
      throw new HostError(String(body.error));
    }
    if (res.status < 200 || res.status >= 300) {
      throw new HostError(`host ${this.baseUrl}: ${method} ${path} answered HTTP ${res.status}`);
    }
    return res.body as T;
  }

  private async request(method: string, path: string, data: string | undefined, signal: AbortSignal | undefined): Promise<RawResponse> {
    signal?.throwIfAborted();
    if (this.inProcess) return this.requestInProcess(method, path, data, signal);
    let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\n${this.authHeader}Accept: application/json\r\nConnection: keep-alive\r\n`;
    head += data === undefined ? '\r\n' : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(data)}\r\n\r\n${data}`;
    let answer: { status: number; text: string };
    for (let attempt = 0; ; attempt++) {
      const conn = await this.acquire(signal);
      const reused = conn.uses > 0;
      try {
        answer = await this.exchange(conn, head, signal);
        break;
      } catch (err) {
        // A kept-alive socket the host closed while idle: the request never reached it, so send it again once.
        if (
          attempt === 0 &&
          reused &&
          err instanceof ConnectionLost &&
          err.beforeAnswer &&
          err.code === 'ECONNRESET' &&
          !signal?.aborted &&
          !this.closed
        )
          continue;
        throw err;
      }
    }
    let body: unknown = null;
    if (answer.text.length > 0) {
      try {
        body = JSON.parse(answer.text);
      } catch {
        // A host in another language may write NaN or ±Infinity as bare tokens (Python's json.dumps does): read as JSON's null, named in $nonFinite.
        body = parseWithNonFinite(answer.text);
        if (body === undefined)
          throw new HostError(
            `host ${this.baseUrl}: ${method} ${path} answered HTTP ${answer.status} with non-JSON: ${answer.text.slice(0, 200)}`,
          );
      }
    }
    return { status: answer.status, body };
  }

  /**
   * The same exchange with a host served by this process: the JSON text of the request in, the
   * JSON text of the answer out (so values cross exactly as they would over HTTP), and an abort
   * reaches the handler as a caller hanging up does.
   */
  private requestInProcess(method: string, path: string, data: string | undefined, signal: AbortSignal | undefined): Promise<RawResponse> {
    const target = inProcessHost(this.baseUrl);
    if (!target) return Promise.reject(new ConnectionLost(`in-process host ${this.baseUrl} stopped`, 'ECONNREFUSED', true));
    const call = inProcessCall(method, path, data);
    return new Promise<RawResponse>((resolve, reject) => {
      let settled = false;
      let forget: (() => void) | undefined;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        this.pendingInProcess.delete(fail);
        forget?.();
        return true;
      };
      const fail = (err: Error): void => {
        if (!settle()) return;
        call.hangUp();
        reject(err);
      };
      const onAbort = (): void => fail(signal!.reason instanceof Error ? signal!.reason : new Error(String(signal!.reason)));
      if (signal) forget = whenAborted(signal, onAbort);
      this.pendingInProcess.add(fail);
      const answered = (a: JsonHttpAnswer): void => {
        if (!settle()) return;
        const { status, text } = answerText(a);
        try {
          resolve({ status, body: text.length > 0 ? JSON.parse(text) : null });
        } catch {
          reject(new HostError(`host ${this.baseUrl}: ${method} ${path} answered HTTP ${status} with non-JSON: ${text.slice(0, 200)}`));
        }
      };
      target.handle(call.req).then(answered, (err: unknown) => {
        // A host in a thread that ended: the call reads as one to a host that went away.
        const code = (err as NodeJS.ErrnoException | undefined)?.code;
        if (code !== undefined && DEAD_HOST_CODES.has(code)) {
          if (settle()) reject(err);
        } else answered({ status: 500, body: { error: errorMessage(err) } });
      });
    });
  }

  private exchange(conn: Connection, head: string, signal: AbortSignal | undefined): Promise<{ status: number; text: string }> {
    if (!signal) return new Promise((resolve, reject) => conn.send(head, { resolve, reject }));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => conn.destroy(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      signal.addEventListener('abort', onAbort, { once: true });
      conn.send(head, {
        resolve: (r) => {
          signal.removeEventListener('abort', onAbort);
          resolve(r);
        },
        reject: (e) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
    });
  }

  /** A free socket (the most recently used one that is still fresh) or a new one. */
  private async acquire(signal: AbortSignal | undefined): Promise<Connection> {
    for (;;) {
      if (this.closed) throw new HostError(`host client for ${this.baseUrl} is closed`);
      const now = performance.now();
      let conn: Connection | undefined;
      for (let idle = this.idle.pop(); idle; idle = this.idle.pop()) {
        if (!idle.dead && now - idle.idleSince <= IDLE_REUSE_MS) {
          conn = idle;
          break;
        }
        idle.destroy();
      }
      if (!conn && this.busy.size < MAX_SOCKETS) conn = new Connection(this.host, this.port, (c) => this.settle(c));
      if (conn) {
        this.busy.add(conn);
        return conn;
      }
      await new Promise<void>((resolve, reject) => {
        const wake = (): void => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = (): void => {
          const i = this.waiting.indexOf(wake);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal!.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(wake);
      });
    }
  }

  /** A socket finished its exchange (back to the free list) or died (forgotten). */
  private settle(conn: Connection): void {
    const wasBusy = this.busy.delete(conn);
    if (!conn.dead && wasBusy && !this.closed) this.idle.push(conn);
    else if (!wasBusy) {
      const i = this.idle.indexOf(conn);
      if (i >= 0) this.idle.splice(i, 1);
    }
    this.waiting.shift()?.();
  }
}
