/**
 * The config of `llm__chat` and `llm__judge`, read and checked once per call: each bad value is
 * an error naming the key. Defaults come from OPENAI_BASE_URL; the API key is never config, only
 * the NAME of the environment variable that holds it.
 */
import { BadInputError } from '../../errors.js';
import { booleanConfig, numberConfig } from '../_lib/config.js';
import { keyVariableRefusal } from './api-key.js';
import type { LimiterSettings } from './endpoint-limiter.js';

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_API_KEY_ENV = 'OPENAI_API_KEY';
export const DEFAULT_MAX_LLM_CALLS = 50;
export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_RETRY_BASE_MS = 500;
/** Where an adaptive endpoint limit starts (llm `max_concurrency` unset). */
export const DEFAULT_CONCURRENCY_START = 16;
export const DEFAULT_CONCURRENCY_FLOOR = 1;
/** High enough that no run asking for many calls at once is held below it unawares. */
export const DEFAULT_CONCURRENCY_CAP = 4096;
export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** The most `max_response_bytes` may be: a run cannot lift the bound that keeps the shared host small. */
export const MAX_RESPONSE_BYTES_LIMIT = 16 * 1024 * 1024;
export const DEFAULT_RECORD_MAX_CHARS = 64 * 1024;
export const DEFAULT_CIRCUIT_FAILURES = 5;
export const DEFAULT_CIRCUIT_COOLDOWN_MS = 10_000;

export type CacheMode = 'auto' | boolean;

export interface LlmConfig {
  baseURL: string;
  model: string;
  temperature: number;
  topP: number | undefined;
  maxTokens: number | undefined;
  seed: number | undefined;
  tools: unknown[] | undefined;
  systemPrompt: string | undefined;
  cache: CacheMode;
  /** 0: no limit. */
  maxLlmCalls: number;
  /** Prompt + completion tokens of one episode before its next call is refused; 0: no limit. */
  maxEpisodeTokens: number;
  maxRetries: number;
  retryBaseMs: number;
  /** A fixed limit of calls in flight to this endpoint (adaptation off); undefined: adaptive. */
  maxConcurrency: number | undefined;
  /** The bounds of the adaptive limit. */
  concurrencyFloor: number;
  concurrencyCap: number;
  timeoutMs: number;
  /** '' means the endpoint needs no key. */
  apiKeyEnv: string;
  /** The longest answer read, in bytes; a longer one fails the call. */
  maxResponseBytes: number;
  /** Characters of one message's content (or a tool call's arguments) kept in an event. */
  recordMaxChars: number;
  /** Connection failures in a row to this base URL that open its circuit; 0: never. */
  circuitFailures: number;
  circuitCooldownMs: number;
}

function optionalString(config: Record<string, unknown>, key: string): string | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new Error(`config ${key} must be a string, got ${JSON.stringify(v)}`);
  return v;
}

function integer(config: Record<string, unknown>, key: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = numberConfig(config, key, fallback);
  if (!Number.isInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `in [${min}, ${max}]`;
    throw new Error(`config ${key} must be an integer ${range}, got ${JSON.stringify(config[key])}`);
  }
  return n;
}

/** A base URL that is not an http(s) URL: every call would fail, and not because the network did. */
export class BaseUrlError extends BadInputError {
  constructor(baseURL: string) {
    super(`config base_url must be an http:// or https:// URL (up to /v1), got ${JSON.stringify(baseURL)}`);
  }
}

function checkedBaseUrl(baseURL: string): string {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new BaseUrlError(baseURL);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BaseUrlError(baseURL);
  return baseURL;
}

function cacheMode(config: Record<string, unknown>): CacheMode {
  const v = config.cache;
  if (v === undefined || v === null || v === 'auto') return 'auto';
  return booleanConfig(config, 'cache', true);
}

export function readLlmConfig(config: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): LlmConfig {
  const baseURL = checkedBaseUrl((optionalString(config, 'base_url') || env.OPENAI_BASE_URL || DEFAULT_BASE_URL).replace(/\/+$/, ''));
  const model = optionalString(config, 'model') || env.OPENAI_MODEL;
  if (!model) throw new Error('config model is required (or set OPENAI_MODEL)');
  const temperature = numberConfig(config, 'temperature', 0);
  if (temperature < 0 || temperature > 2) throw new Error(`config temperature must be in [0, 2], got ${temperature}`);
  const topP = config.top_p === undefined || config.top_p === null ? undefined : numberConfig(config, 'top_p', 1);
  if (topP !== undefined && (topP < 0 || topP > 1)) throw new Error(`config top_p must be in [0, 1], got ${topP}`);
  const tools = config.tools;
  if (tools !== undefined && tools !== null && !Array.isArray(tools)) {
    throw new Error(`config tools must be an array of OpenAI tool definitions, got ${JSON.stringify(tools)}`);
  }
  const apiKeyEnv = optionalString(config, 'api_key_env') ?? DEFAULT_API_KEY_ENV;
  const refusal = keyVariableRefusal(apiKeyEnv, env);
  if (refusal !== undefined) throw new Error(refusal);
  return {
    baseURL,
    model,
    temperature,
    topP,
    maxTokens: config.max_tokens === undefined || config.max_tokens === null ? undefined : integer(config, 'max_tokens', 0, 1),
    seed: config.seed === undefined || config.seed === null ? undefined : integer(config, 'seed', 0, 0),
    tools: Array.isArray(tools) && tools.length > 0 ? tools : undefined,
    systemPrompt: optionalString(config, 'system_prompt') || undefined,
    cache: cacheMode(config),
    maxLlmCalls: integer(config, 'max_llm_calls', DEFAULT_MAX_LLM_CALLS, 0),
    maxEpisodeTokens: integer(config, 'max_episode_tokens', 0, 0),
    maxRetries: integer(config, 'max_retries', DEFAULT_MAX_RETRIES, 0),
    retryBaseMs: integer(config, 'retry_base_ms', DEFAULT_RETRY_BASE_MS, 0),
    maxConcurrency:
      config.max_concurrency === undefined || config.max_concurrency === null ? undefined : integer(config, 'max_concurrency', 1, 1),
    ...concurrencyBounds(config),
    timeoutMs: integer(config, 'timeout_ms', DEFAULT_TIMEOUT_MS, 1),
    apiKeyEnv,
    maxResponseBytes: integer(config, 'max_response_bytes', DEFAULT_MAX_RESPONSE_BYTES, 1024, MAX_RESPONSE_BYTES_LIMIT),
    recordMaxChars: integer(config, 'record_max_chars', DEFAULT_RECORD_MAX_CHARS, 256, MAX_RESPONSE_BYTES_LIMIT),
    circuitFailures: integer(config, 'circuit_failures', DEFAULT_CIRCUIT_FAILURES, 0),
    circuitCooldownMs: integer(config, 'circuit_cooldown_ms', DEFAULT_CIRCUIT_COOLDOWN_MS, 0),
  };
}

function concurrencyBounds(config: Record<string, unknown>): { concurrencyFloor: number; concurrencyCap: number } {
  const concurrencyFloor = integer(config, 'concurrency_floor', DEFAULT_CONCURRENCY_FLOOR, 1);
  const concurrencyCap = integer(config, 'concurrency_cap', DEFAULT_CONCURRENCY_CAP, 1);
  if (concurrencyFloor > concurrencyCap) {
    throw new BadInputError(`config concurrency_floor (${concurrencyFloor}) must not exceed concurrency_cap (${concurrencyCap})`);
  }
  return { concurrencyFloor, concurrencyCap };
}

/** The endpoint limiter's settings of a call's config: fixed when `max_concurrency` is set, else adaptive within the floor and cap. */
export const limiterSettings = (c: LlmConfig): LimiterSettings => ({
  fixed: c.maxConcurrency,
  initial: DEFAULT_CONCURRENCY_START,
  floor: c.concurrencyFloor,
  cap: c.concurrencyCap,
});

/** Whether responses are read from and written to the cache: `auto` caches only deterministic (temperature 0) calls. */
export const cacheEnabled = (c: LlmConfig): boolean => (c.cache === 'auto' ? c.temperature === 0 : c.cache);
