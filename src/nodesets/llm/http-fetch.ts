/**
 * The `fetch` the `openai` client is given: one request on node:http / node:https with keep-alive
 * agents, the answer read whole and handed back as a standard Response. The client's default
 * (the fetch built into Node) costs about twice the CPU per chat-completions call, and one llm
 * host serves every worker of a run (docs/decisions.md has the measurement). Anything this path
 * does not cover goes to the built-in fetch unchanged: a Request object, a streamed or form body,
 * a scheme other than http(s), or a proxy named in the environment (the built-in fetch may honour
 * it where node:http would not).
 */
import http from 'node:http';
import https from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
} as const;

/** A proxy named in the environment, read once: the host's environment is fixed when it starts, and this is on every call's path. */
export const PROXIED = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NODE_USE_ENV_PROXY'].some((v) => process.env[v]);

/** Statuses whose Response may not carry a body. */
const NO_BODY = new Set([101, 204, 205, 304]);

const abortError = (signal: AbortSignal): unknown =>
  signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');

function decoded(body: Buffer, encoding: string | undefined): Buffer {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(body);
    case 'deflate':
      return inflateSync(body);
    case 'br':
      return brotliDecompressSync(body);
    default:
      return body;
  }
}

function headerRecord(init: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (init === undefined) return out;
  const headers = init instanceof Headers ? init : new Headers(init);
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/**
 * A Response whose body is already in memory: `json()`, `text()` and `arrayBuffer()` read the
 * bytes directly, where a standard Response built on them would first wrap them in a stream and
 * then read that stream back (~0.2 ms of the llm host's CPU per call, docs/decisions.md). Every
 * other use of the body (`body`, `blob()`, `bytes()`, `formData()`, `clone()`) goes through a
 * standard Response made from the same bytes on first use. As with a standard Response, a body
 * can be read once: a second read rejects with a TypeError.
 */
class BufferedResponse extends Response {
  readonly #data: Buffer;
  readonly #init: ResponseInit;
  #standard: Response | undefined;
  #used = false;

  constructor(data: Buffer, init: ResponseInit) {
    super(null, init);
    this.#data = data;
    this.#init = init;
  }

  /** The standard Response over the same bytes, made when the body is first used another way. */
  #asStandard(): Response {
    this.#standard ??= new Response(this.#data as unknown as BodyInit, this.#init);
    return this.#standard;
  }

  /** The standard Response to read the body from; throws as one would once the body was read here. */
  #unread(): Response {
    if (this.#used && !this.#standard) throw new TypeError('Body is unusable: Body has already been read');
    return this.#asStandard();
  }

  #take(): Buffer {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
    return this.#data;
  }

  override get body(): Response['body'] {
    return this.#used && !this.#standard ? null : this.#asStandard().body;
  }

  override get bodyUsed(): boolean {
    return this.#standard ? this.#standard.bodyUsed : this.#used;
  }

  override async json(): Promise<unknown> {
    if (this.#standard) return this.#standard.json();
    return JSON.parse(this.#take().toString('utf8')) as unknown;
  }

  override async text(): Promise<string> {
    if (this.#standard) return this.#standard.text();
    return this.#take().toString('utf8');
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#standard) return this.#standard.arrayBuffer();
    const data = this.#take();
    return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
  }

  override async blob(): Promise<Blob> {
    return this.#unread().blob();
  }

  override async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#unread().bytes();
  }

  override async formData(): Promise<FormData> {
    return this.#unread().formData();
  }

  override clone(): Response {
    return this.#unread().clone();
  }
}

/** A fetch-compatible function for the `openai` client's `fetch` option. */
export function httpFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const body = init?.body;
  const plainBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
  const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : undefined;
  if (!url || !plainBody || !(url.protocol in agents) || PROXIED) {
    return fetch(input, init);
  }
  const signal = init?.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortError(signal));
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<Response>((resolve, reject) => {
    const req = transport.request(
      url,
      { method: init?.method ?? 'GET', headers: headerRecord(init?.headers), agent: agents[url.protocol as keyof typeof agents] },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', fail);
        res.on('end', () => {
          signal?.removeEventListener('abort', onAbort);
          try {
            const status = res.statusCode ?? 0;
            const headers = new Headers();
            const raw = res.rawHeaders;
            for (let i = 0; i + 1 < raw.length; i += 2) {
              const name = raw[i]!.toLowerCase();
              // The body handed on is already decoded, as the built-in fetch does.
              if (name !== 'content-encoding' && name !== 'content-length') headers.append(raw[i]!, raw[i + 1]!);
            }
            const data = decoded(Buffer.concat(chunks), res.headers['content-encoding']);
            const init = { status, statusText: res.statusMessage ?? '', headers };
            resolve(NO_BODY.has(status) ? new Response(null, init) : new BufferedResponse(data, init));
          } catch (err) {
            reject(new TypeError('fetch failed', { cause: err }));
          }
        });
      },
    );
    function fail(err: Error): void {
      signal?.removeEventListener('abort', onAbort);
      req.destroy();
      reject(new TypeError('fetch failed', { cause: err }));
    }
    function onAbort(): void {
      req.destroy();
      reject(abortError(signal!));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', fail);
    req.end(body ?? undefined);
  });
}
