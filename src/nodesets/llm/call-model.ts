/**
 * One chat-completions call: the response cache first, then the endpoint through the official
 * `openai` client under the endpoint's concurrency limit (endpoint-limiter.ts), retried with exponential backoff on
 * 429, 5xx and connection failures. The client's own retries are off (maxRetries 0) so each retry
 * is counted and reported here. Every string that leaves is scrubbed of the API key. An answer
 * longer than `max_response_bytes` fails the call unread and unretried; an endpoint that keeps
 * failing to connect opens its circuit, and calls to it then fail at once (circuit-breaker.ts).
 */
import OpenAI from 'openai';
import { createPrng, type Prng } from '../../core/prng.js';
import { CodedError, errorMessage, type ErrorCode } from '../../errors.js';
import { sleep } from '../_lib/sleep.js';
import { readApiKey, redact, redactDeep } from './api-key.js';
import { breakerFor, CircuitOpenError } from './circuit-breaker.js';
import { limitedFetch, ResponseTooLargeError } from './http-fetch.js';
import { limiterFor, type CallOutcome } from './endpoint-limiter.js';
import { cacheEnabled, limiterSettings, type LlmConfig } from './llm-config.js';
import { retryAfterMs } from './retry-after.js';
import { cacheDir, cacheKey, ResponseCache, type CachedResponse } from './response-cache.js';

/** The longest wait between two tries. */
const MAX_BACKOFF_MS = 30_000;

export type ChatMessage = { role: string; content: string | null; [k: string]: unknown };

/** An infrastructure event: a retried failure. */
export interface RetryEvent {
  type: 'infra';
  kind: 'retry';
  attempt: number;
  status: number | null;
  error: string;
  delay_ms: number;
}

export interface ModelCallResult {
  response: CachedResponse;
  latencyMs: number;
  cached: boolean;
  retries: RetryEvent[];
}

/** The endpoint still failed after every retry (or failed in a way no retry can fix, such as a dead host). */
export class InfraFailure extends Error {
  constructor(
    message: string,
    readonly retries: RetryEvent[],
    /** LLM_CIRCUIT_OPEN when the endpoint's circuit is open; absent for a call that used up its retries. */
    readonly code?: ErrorCode,
  ) {
    super(message);
    this.name = 'InfraFailure';
  }
}

/** The endpoint answered 2xx with a body that is no chat completion (not JSON, no choice): a wrong base_url or a broken proxy. */
export class EndpointAnswerError extends CodedError {
  constructor(baseURL: string, what: string) {
    super('NODE_ERROR', `${baseURL} answered with something that is not a chat completion: ${what}`);
    this.name = 'EndpointAnswerError';
  }
}

const clients = new Map<string, OpenAI>();
const caches = new Map<string, ResponseCache>();

/** The cache of the directory the environment names now (read per call, so a changed variable takes effect). */
function currentCache(): ResponseCache {
  const dir = cacheDir();
  let c = caches.get(dir);
  if (!c) {
    c = new ResponseCache(dir);
    caches.set(dir, c);
  }
  return c;
}

function clientFor(baseURL: string, apiKey: string, timeoutMs: number, maxResponseBytes: number): OpenAI {
  // Keyed by the key's variable value too: a changed key gets a new client. The map stays in memory only.
  const id = `${baseURL}\u0000${apiKey}\u0000${timeoutMs}\u0000${maxResponseBytes}`;
  let c = clients.get(id);
  if (!c) {
    c = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: timeoutMs, fetch: limitedFetch(maxResponseBytes) });
    clients.set(id, c);
  }
  return c;
}

/** The request body sent (and hashed for the cache): only parameters that are set. */
export function requestBody(config: LlmConfig, messages: readonly ChatMessage[]): Record<string, unknown> {
  const body: Record<string, unknown> = { model: config.model, messages, temperature: config.temperature };
  if (config.topP !== undefined) body.top_p = config.topP;
  if (config.maxTokens !== undefined) body.max_tokens = config.maxTokens;
  if (config.seed !== undefined) body.seed = config.seed;
  if (config.tools !== undefined) body.tools = config.tools;
  return body;
}

/**
 * The repeat index the cache key holds: the play's at a temperature above 0, so each repeat of a
 * sampled answer is its own call; 0 at temperature 0, where every repeat asks the same
 * deterministic question and is served the first repeat's answer (identical by construction).
 */
export const cacheRepeat = (config: LlmConfig, repeat: number | undefined): number => (config.temperature > 0 ? (repeat ?? 0) : 0);

/** 429, 408, 409, any 5xx, and no HTTP answer at all (refused, reset, timed out) are worth another try. */
function retryable(err: unknown): { retry: boolean; status: number | null } {
  if (err instanceof OpenAI.APIConnectionError) return { retry: true, status: null };
  if (err instanceof OpenAI.APIError) {
    const s = err.status ?? null;
    return { retry: s === null || s === 408 || s === 409 || s === 429 || s >= 500, status: s };
  }
  return { retry: false, status: null };
}

/** The first error of `err`'s cause chain that is a `T`. */
function causeOf<T>(err: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof type) return e;
  }
  return undefined;
}

/** A failure's message and, for a connection error, what lies under the client's "Connection error.": `connect ECONNREFUSED …`. */
function failureMessage(err: unknown): string {
  const message = errorMessage(err);
  let deepest: unknown = err;
  for (let depth = 0; depth < 8 && deepest instanceof Error && deepest.cause instanceof Error; depth++) deepest = deepest.cause;
  const under = deepest !== err && deepest instanceof Error ? deepest.message : '';
  return under && !message.includes(under) ? `${message} (${under})` : message;
}

export interface CallModelOptions {
  config: LlmConfig;
  messages: readonly ChatMessage[];
  /** Seeds the backoff jitter: (episode seed, call number), so waits do not depend on the worker. */
  seed: number;
  callNumber: number;
  /** Which play of its episode this call belongs to (CallContext.repeat); part of the cache key when sampling is random. */
  repeat?: number | undefined;
  /** Who the endpoint's waiting calls are shared between, turn by turn: the run id. @default '' (one caller) */
  caller?: string;
  /** How many calls the caller's run would have in flight: lifts an adaptive endpoint limit not yet cut up to it. */
  runInFlight?: number;
  signal?: AbortSignal;
}

/** The first run id of an episode key `<runId>:<episodeIndex>`: the unit a shared endpoint is shared fairly between. */
export const runOfEpisodeKey = (episodeKey: string): string => {
  const at = episodeKey.lastIndexOf(':');
  return at < 0 ? episodeKey : episodeKey.slice(0, at);
};

export async function callModel(o: CallModelOptions): Promise<ModelCallResult> {
  const { config } = o;
  const apiKey = readApiKey(config.apiKeyEnv);
  const body = requestBody(config, o.messages);
  const useCache = cacheEnabled(config);
  const key = useCache ? cacheKey(config.baseURL, body, cacheRepeat(config, o.repeat)) : '';
  const t0 = performance.now();
  const cache = useCache ? currentCache() : undefined;
  if (!cache) return callEndpoint(o, body, apiKey, undefined, key);
  const hitOf = (response: CachedResponse): ModelCallResult => ({ response, latencyMs: performance.now() - t0, cached: true, retries: [] });
  const before = inFlight.get(key);
  const hit = before ? await abortable(before, o.signal) : await cache.get(key);
  if (hit) return hitOf(hit);
  // The same request already on its way (another episode, another repeat): its answer, not a second call.
  const pending = inFlight.get(key);
  if (pending && pending !== before) {
    const shared = await abortable(pending, o.signal);
    if (shared) return hitOf(shared);
  }
  const call = callEndpoint(o, body, apiKey, cache, key);
  const shared = call.then(
    (r) => r.response,
    () => undefined,
  );
  inFlight.set(key, shared);
  try {
    return await call;
  } finally {
    if (inFlight.get(key) === shared) inFlight.delete(key);
  }
}

/**
 * The cacheable requests on their way to an endpoint, by cache key, each as the response it will
 * give (undefined when it fails: a waiting caller then calls on its own). A request made while an
 * identical one is in flight waits for that one, so how many calls a run pays for and how many of
 * them are cache hits do not depend on how many workers run it.
 */
const inFlight = new Map<string, Promise<CachedResponse | undefined>>();

/** `p`, or the signal's reason once it aborts first. */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** The call itself, retried; its answer is written to `cache` when there is one. */
async function callEndpoint(
  o: CallModelOptions,
  body: Record<string, unknown>,
  apiKey: string,
  cache: ResponseCache | undefined,
  key: string,
): Promise<ModelCallResult> {
  const { config } = o;
  const client = clientFor(config.baseURL, apiKey, config.timeoutMs, config.maxResponseBytes);
  const limiter = limiterFor(config.baseURL, config.model, limiterSettings(config));
  const breaker = breakerFor(config.baseURL, { failures: config.circuitFailures, cooldownMs: config.circuitCooldownMs });
  // Made at the first retry: most calls need none.
  let prng: Prng | undefined;
  const retries: RetryEvent[] = [];
  for (let attempt = 0; ; attempt++) {
    const permit = await limiter.acquire(o.caller ?? '', o.signal, o.runInFlight);
    let probe: boolean;
    try {
      probe = breaker.admit();
    } catch (err) {
      permit.release({ kind: 'other' });
      throw circuitFailure(err, retries);
    }
    const tCall = performance.now();
    let completion: OpenAI.ChatCompletion | undefined;
    let failure: unknown;
    try {
      completion = await client.chat.completions.create(
        body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming,
        o.signal ? { signal: o.signal } : undefined,
      );
    } catch (err) {
      failure = err;
    }
    const latencyMs = performance.now() - tCall;
    permit.release(outcomeOf(completion, failure, latencyMs));
    if (completion) {
      breaker.succeeded();
      const response = responseOf(completion, config.baseURL, apiKey);
      // A cache that cannot be written costs a re-run a call, not this episode its answer.
      if (cache) await cache.put(key, response).catch(() => {});
      return { response, latencyMs, cached: false, retries };
    }
    if (o.signal?.aborted) {
      if (probe) breaker.probeAbandoned();
      o.signal.throwIfAborted();
    }
    // The endpoint did answer, too much: asking again would only fetch the same flood.
    const tooLarge = causeOf(failure, ResponseTooLargeError);
    if (tooLarge) {
      breaker.succeeded();
      throw tooLarge;
    }
    const { retry, status } = retryable(failure);
    const message = redact(failureMessage(failure), apiKey);
    if (failure instanceof OpenAI.APIConnectionError) {
      breaker.failed(message);
      if (breaker.state === 'open') throw circuitFailure(breaker.openError(), retries);
    } else {
      breaker.succeeded();
    }
    if (!retry) {
      // No HTTP error: the answer itself could not be read (invalid JSON in a 2xx body).
      if (!(failure instanceof OpenAI.APIError)) throw new EndpointAnswerError(config.baseURL, message);
      // A request the endpoint refuses (bad model name, bad key, bad parameters): the graph's fault, not the network's.
      throw new Error(`${config.baseURL} refused the request${status ? ` (HTTP ${status})` : ''}: ${message}`);
    }
    if (attempt >= config.maxRetries) {
      throw new InfraFailure(
        `${config.baseURL} failed after ${attempt + 1} attempt(s)${status ? ` (HTTP ${status})` : ''}: ${message}`,
        retries,
      );
    }
    const base = Math.min(MAX_BACKOFF_MS, config.retryBaseMs * 2 ** attempt);
    prng ??= createPrng(o.seed, o.callNumber);
    const delay = Math.round(base * (0.5 + 0.5 * prng.next()));
    retries.push({ type: 'infra', kind: 'retry', attempt: attempt + 1, status, error: message, delay_ms: delay });
    await sleep(delay, o.signal);
  }
}

/** What a call tells the limiter: answered with its latency, overloaded (429, 503) with the wait asked for, or nothing. */
function outcomeOf(completion: unknown, failure: unknown, latencyMs: number): CallOutcome {
  if (completion) return { kind: 'answered', latencyMs };
  if (failure instanceof OpenAI.APIError && (failure.status === 429 || failure.status === 503)) {
    return { kind: 'overloaded', status: failure.status, retryAfterMs: retryAfterMs(failure.headers) };
  }
  return { kind: 'other' };
}

/** An open circuit as the InfraFailure that ends the episode INFRA_ERROR; any other error as it is. */
function circuitFailure(err: unknown, retries: RetryEvent[]): unknown {
  return err instanceof CircuitOpenError ? new InfraFailure(err.message, retries, err.code) : err;
}

/** A string field of an answer worth recording: non-empty and short (an identifier, not a flood). */
const shortText = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' && v.length <= 256 ? v : undefined);

/** A token count as the endpoint reported it, when it is one: a missing, negative or non-numeric count reads 0. */
const tokenCount = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/**
 * The parts of a completion kept (and cached): the first choice's message, its finish reason, the
 * token counts. The message is scrubbed of the key too: an endpoint (or a model) that echoes the
 * request's Authorization header must not carry the key into events, the cache or a tool.
 */
function responseOf(completion: OpenAI.ChatCompletion, baseURL: string, apiKey: string): CachedResponse {
  const choice = completion.choices?.[0];
  if (!choice?.message) throw new EndpointAnswerError(baseURL, 'no choice in it (not a chat-completions endpoint?)');
  const m = choice.message;
  const message: CachedResponse['message'] = { role: 'assistant', content: m.content ?? null };
  if (m.tool_calls && m.tool_calls.length > 0) message.tool_calls = m.tool_calls;
  const response: CachedResponse = {
    message: redactDeep(message, apiKey),
    finish_reason: choice.finish_reason ?? null,
    usage: {
      prompt_tokens: tokenCount(completion.usage?.prompt_tokens),
      completion_tokens: tokenCount(completion.usage?.completion_tokens),
    },
  };
  // What the provider says answered (an alias resolves to a dated snapshot) and its backend's fingerprint.
  const reported = shortText(completion.model);
  const fingerprint = shortText(completion.system_fingerprint);
  if (reported !== undefined) response.model = redact(reported, apiKey);
  if (fingerprint !== undefined) response.system_fingerprint = redact(fingerprint, apiKey);
  return response;
}
