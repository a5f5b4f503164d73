/** A worker's HTTP client of the head's scale-out routes: JSON POSTs with the server's token; an error answer becomes a CodedError. */
import { CodedError, ERROR_CODES, type ErrorCode } from '../errors.js';

export class HeadRequestError extends CodedError {
  readonly status: number;
  constructor(code: ErrorCode, status: number, message: string) {
    super(code, message);
    this.status = status;
  }
}

export class HeadClient {
  readonly #base: string;
  readonly #token: string | undefined;

  constructor(serverUrl: string, token: string | undefined) {
    this.#base = serverUrl.replace(/\/$/, '');
    this.#token = token;
  }

  async post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    const res = await fetch(this.#base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(this.#token ? { authorization: `Bearer ${this.#token}` } : {}) },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
    const text = await res.text();
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
