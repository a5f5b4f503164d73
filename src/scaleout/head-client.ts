/**
 * A worker's HTTP client of the head's scale-out routes: JSON POSTs with the server's token; an
 * error answer becomes a HeadRequestError, a request that never got an answer (network error,
 * timeout) one with status 0 and code HEAD_UNREACHABLE.
 */
import { CodedError, ERROR_CODES, errorMessage, type ErrorCode } from '../errors.js';

export class HeadRequestError extends CodedError {
  /** The HTTP status, 0 when no answer came. */
  readonly status: number;
  constructor(code: ErrorCode, status: number, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.status = status;
  }

  /** Worth asking again: no answer (network, timeout, head restarting) or the head's own fault (5xx). */
  get transient(): boolean {
    return this.status === 0 || this.status >= 500;
  }

  /** The head refused this worker's token (or origin): no request of this worker will be taken. */
  get refused(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** True for an error worth asking again (see HeadRequestError.transient). */
export const isTransientHeadError = (err: unknown): boolean => err instanceof HeadRequestError && err.transient;

export interface HeadClientOptions {
  /** One request is given up (HEAD_UNREACHABLE) after this long without an answer. @default 60000 */
  requestTimeoutMs?: number;
}

export class HeadClient {
  readonly #base: string;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;

  constructor(serverUrl: string, token: string | undefined, opts: HeadClientOptions = {}) {
    this.#base = serverUrl.replace(/\/$/, '');
    this.#token = token;
    this.#timeoutMs = opts.requestTimeoutMs ?? 60_000;
  }

  async post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    // A head that accepts the connection and never answers must not hold a shard (and its lock) for ever.
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.#base + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.#token ? { authorization: `Bearer ${this.#token}` } : {}) },
        body: JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) throw err;
      const why = timeout.aborted ? `no answer within ${this.#timeoutMs} ms` : errorMessage((err as { cause?: unknown }).cause ?? err);
      throw new HeadRequestError('HEAD_UNREACHABLE', 0, `${path}: the head at ${this.#base} cannot be reached (${why})`, { cause: err });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new HeadRequestError('INTERNAL_SERVER_ERROR', res.status, `${path}: the server answered ${res.status} with no JSON`);
    }
    if (!res.ok) {
      const e = (json as { errors?: { message?: string; extensions?: { code?: string } }[] }).errors?.[0];
      const code = e?.extensions?.code;
      throw new HeadRequestError(
        code && Object.hasOwn(ERROR_CODES, code) ? (code as ErrorCode) : 'INTERNAL_SERVER_ERROR',
        res.status,
        `${path}: ${e?.message ?? `HTTP ${res.status}`}`,
      );
    }
    return json as T;
  }
}
