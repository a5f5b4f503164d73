/**
 * HostClient: the caller's side of the host protocol (docs/host-protocol.md) over node:http
 * with a keep-alive agent, so a call on loopback costs one request on an open socket.
 */
import http from 'node:http';
import { HostDiedError, HostError, errorMessage } from '../errors.js';
import type { HostStats } from './host.js';
import type { HostCallRequest, HostHealth, NodeOutputs, NodesetManifest, PanelLoadResult, PanelState } from './types.js';

/** Socket errors that mean nobody is listening any more: the host exited or was killed. */
const DEAD_HOST_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH']);

interface RawResponse {
  status: number;
  body: unknown;
}

export class HostClient {
  readonly baseUrl: string;
  private readonly host: string;
  private readonly port: number;
  private readonly agent: http.Agent;
  private closed = false;

  constructor(baseUrl: string) {
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
    // Idle sockets are dropped well before a host's own idle timeout, so a reused socket is rarely one the host is closing.
    this.agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 1000, maxSockets: 256, timeout: 4000 });
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

  panelLoad(episodeKey: string, signal?: AbortSignal): Promise<PanelLoadResult> {
    return this.json<PanelLoadResult>('POST', '/panel/load', { episodeKey }, signal);
  }

  async evict(episodeKey: string, signal?: AbortSignal): Promise<void> {
    await this.json('POST', '/evict', { episodeKey }, signal);
  }

  async releaseCaller(callerId: string, signal?: AbortSignal): Promise<void> {
    await this.json('POST', '/callers/release', { callerId }, signal);
  }

  /** Drops the keep-alive sockets. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.agent.destroy();
  }

  private async json<T>(method: 'GET' | 'POST', path: string, payload: unknown, signal?: AbortSignal): Promise<T> {
    if (this.closed) throw new HostError(`host client for ${this.baseUrl} is closed`);
    const data = payload === undefined ? undefined : Buffer.from(JSON.stringify(payload));
    let res: RawResponse;
    try {
      res = await this.request(method, path, data, signal, true);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
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

  private request(method: string, path: string, data: Buffer | undefined, signal: AbortSignal | undefined, mayRetry: boolean): Promise<RawResponse> {
    return new Promise<RawResponse>((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { accept: 'application/json' };
      if (data) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = data.length;
      }
      const req = http.request({ host: this.host, port: this.port, method, path, headers, agent: this.agent, signal });
      let answered = false;
      req.on('response', (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = null;
          if (text.length > 0) {
            try {
              body = JSON.parse(text);
            } catch {
              reject(new HostError(`host ${this.baseUrl}: ${method} ${path} answered HTTP ${res.statusCode ?? '?'} with non-JSON: ${text.slice(0, 200)}`));
              return;
            }
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the host closed while idle: the request never reached it, so send it again once.
        if (mayRetry && !answered && req.reusedSocket && err.code === 'ECONNRESET' && !signal?.aborted) {
          this.request(method, path, data, signal, false).then(resolve, reject);
          return;
        }
        reject(err);
      });
      req.end(data);
    });
  }
}
