/**
 * The `fetch` the `openai` client is given: one request on node:http / node:https with keep-alive
 * agents, the answer read whole and handed back as a standard Response. The client's default
 * (the fetch built into Node) costs about twice the CPU per chat-completions call, and one llm
 * host serves every worker of a run (docs/decisions.md has the measurement). Anything this path
 * does not cover goes to the built-in fetch unchanged: a Request object, a streamed or form body,
 * a scheme other than http(s), or a proxy named in the environment (the built-in fetch may honour
 * it where node:http would not).
 *
 * `limitedFetch(n)` reads at most n bytes of an answer (before and after decoding): past them it
 * stops reading, destroys the request and rejects with a ResponseTooLargeError, so an endpoint that
 * sends 20 MB costs the host n bytes, not 20 MB.
 */
import http from 'node:http';
import https from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync, type ZlibOptions } from 'node:zlib';
import { CodedError } from '../../errors.js';

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

/** An answer longer than the call's `max_response_bytes`: the request was abandoned once the limit was passed. */
export class ResponseTooLargeError extends CodedError {
  readonly url: string;
  readonly limit: number;
  constructor(url: string, limit: number) {
    super('LLM_RESPONSE_TOO_LARGE', `${url} answered with more than ${limit} bytes (max_response_bytes); the answer was abandoned`);
    this.url = url;
    this.limit = limit;
  }
}

function decoded(body: Buffer, encoding: string | undefined, maxBytes: number): Buffer {
  // A compressed answer is bounded once decoded too: a small gzip body may inflate to gigabytes.
  const options: ZlibOptions = Number.isFinite(maxBytes) ? { maxOutputLength: maxBytes } : {};
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(body, options);
    case 'deflate':
      return inflateSync(body, options);
    case 'br':
      return brotliDecompressSync(body, options);
    default:
      return body;
  }
}

const isBufferTooLarge = (err: unknown): boolean => (err as NodeJS.ErrnoException | undefined)?.code === 'ERR_BUFFER_TOO_LARGE';

/** The URL without its query and credentials, as an error may name it. */
const shownUrl = (url: URL): string => `${url.origin}${url.pathname}`;

/** `res` with its body read into memory, or a ResponseTooLargeError once more than `maxBytes` came. */
async function boundedResponse(res: Response, url: string, maxBytes: number): Promise<Response> {
  const declared = Number(res.headers.get('content-length'));
  const tooLarge = new ResponseTooLargeError(url, maxBytes);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge;
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body?.getReader();
  for (;;) {
    const next = reader ? await reader.read() : { done: true as const, value: undefined };
    if (next.done) break;
    total += next.value.byteLength;
    if (total > maxBytes) {
      await reader?.cancel().catch(() => {});
      throw tooLarge;
    }
    chunks.push(next.value);
  }
  const init = { status: res.status, statusText: res.statusText, headers: res.headers };
  return NO_BODY.has(res.status) ? new Response(null, init) : new BufferedResponse(Buffer.concat(chunks), init);
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

export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A fetch-compatible function for the `openai` client's `fetch` option, with no bound on an answer's size. */
export function httpFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  return fetchBounded(input, init, Number.POSITIVE_INFINITY);
}

/**
 * What an endpoint's models list or a check's error body may take: a list of a few hundred
 * models is tens of KB, and no answer to a check is worth more.
 */
export const ENDPOINT_CHECK_MAX_BYTES = 1024 * 1024;

/** A fetch-compatible function that reads at most `maxBytes` of an answer (a ResponseTooLargeError past them). */
export function limitedFetch(maxBytes: number): FetchFunction {
  return (input, init) => fetchBounded(input, init, maxBytes);
}

function fetchBounded(input: string | URL | Request, init: RequestInit | undefined, maxBytes: number): Promise<Response> {
  const body = init?.body;
  const plainBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
  const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : undefined;
  if (!url || !plainBody || !(url.protocol in agents) || PROXIED) {
    if (!Number.isFinite(maxBytes)) return fetch(input, init);
    const shown = url ? shownUrl(url) : input instanceof Request ? shownUrl(new URL(input.url)) : String(input);
    return fetch(input, init).then((res) => boundedResponse(res, shown, maxBytes));
  }
  const signal = init?.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortError(signal));
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<Response>((resolve, reject) => {
    const req = transport.request(
      url,
      { method: init?.method ?? 'GET', headers: headerRecord(init?.headers), agent: agents[url.protocol as keyof typeof agents] },
      (res) => {
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) return tooLarge();
        const chunks: Buffer[] = [];
        let total = 0;
        res.on('data', (chunk: Buffer) => {
          total += chunk.length;
          if (total > maxBytes) tooLarge();
          else chunks.push(chunk);
        });
        res.on('error', fail);
        res.on('end', () => {
          if (settled) return;
          settled = true;
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
            const data = decoded(Buffer.concat(chunks), res.headers['content-encoding'], maxBytes);
            const init = { status, statusText: res.statusMessage ?? '', headers };
            resolve(NO_BODY.has(status) ? new Response(null, init) : new BufferedResponse(data, init));
          } catch (err) {
            reject(
              isBufferTooLarge(err) ? new ResponseTooLargeError(shownUrl(url), maxBytes) : new TypeError('fetch failed', { cause: err }),
            );
          }
        });
      },
    );
    let settled = false;
    function fail(err: Error): void {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      req.destroy();
      reject(new TypeError('fetch failed', { cause: err }));
    }
    function tooLarge(): void {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      req.destroy();
      reject(new ResponseTooLargeError(shownUrl(url!), maxBytes));
    }
    function onAbort(): void {
      if (settled) return;
      settled = true;
      req.destroy();
      reject(abortError(signal!));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', fail);
    req.end(body ?? undefined);
  });
}
