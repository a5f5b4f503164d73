/**
 * The content-addressed response cache: one JSON file per request under
 * `<dir>/<first two hex digits>/<sha256>.json`, the key hashed over the base URL, the model, every
 * request parameter (temperature, top_p, max_tokens, seed, tools), the messages and the play's
 * repeat index (never the API key). Written atomically (temp file + rename),
 * so concurrent hosts writing the same entry leave one whole file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** Where the cache lives: EVAL_LLM_CACHE_DIR (`evalctl run` and `evalctl serve` set it to `<outputs>/llm-cache` when unset), else `./outputs/llm-cache`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.EVAL_LLM_CACHE_DIR || join('outputs', 'llm-cache'));
}

/** JSON with object keys sorted, so equal requests hash equal whatever order their fields were built in. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

/** The key of a request; `repeat` 0 (a play without repeats, or any call at temperature 0) keeps the key such a request always had. */
export const cacheKey = (baseURL: string, request: Record<string, unknown>, repeat = 0): string =>
  createHash('sha256')
    .update(canonicalJson(repeat === 0 ? { base_url: baseURL, request } : { base_url: baseURL, request, repeat }))
    .digest('hex');

export interface CachedResponse {
  message: { role: 'assistant'; content: string | null; tool_calls?: unknown[] };
  finish_reason: string | null;
  usage: { prompt_tokens: number; completion_tokens: number };
  /** The model the provider said answered (its `model` field), when it said. */
  model?: string;
  /** The provider's `system_fingerprint`, when it sent one. */
  system_fingerprint?: string;
}

export class ResponseCache {
  constructor(readonly dir: string) {}

  #path(key: string): string {
    return join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  /**
   * The stored response, or undefined when absent, unreadable or not a response (a torn file, or one
   * edited or left by something else, is a miss, then overwritten).
   */
  async get(key: string): Promise<CachedResponse | undefined> {
    let v: unknown;
    try {
      v = JSON.parse(await readFile(this.#path(key), 'utf8'));
    } catch {
      return undefined;
    }
    return isCachedResponse(v) ? v : undefined;
  }

  async put(key: string, value: CachedResponse): Promise<void> {
    const path = this.#path(key);
    await mkdir(join(this.dir, key.slice(0, 2)), { recursive: true });
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, JSON.stringify(value));
    await rename(tmp, path);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** Whether a cache file holds what `put` writes: the message, its finish reason and the token counts. */
function isCachedResponse(v: unknown): v is CachedResponse {
  if (!isObject(v) || !isObject(v.message) || !isObject(v.usage)) return false;
  const { message, usage } = v;
  return (
    message.role === 'assistant' &&
    (typeof message.content === 'string' || message.content === null) &&
    (message.tool_calls === undefined || Array.isArray(message.tool_calls)) &&
    (typeof v.finish_reason === 'string' || v.finish_reason === null) &&
    isCount(usage.prompt_tokens) &&
    isCount(usage.completion_tokens) &&
    (v.model === undefined || typeof v.model === 'string') &&
    (v.system_fingerprint === undefined || typeof v.system_fingerprint === 'string')
  );
}
