/**
 * The API key: read only from the environment variable a node's config names, and scrubbed from
 * every string that leaves the nodeset (errors, events), so it never reaches a log or a run directory.
 */
import { BadInputError } from '../../errors.js';
import { isModelKeyVariable, modelKey, redactModelKeys } from '../../core/model-keys.js';

/** Sent to endpoints that need no key (api_key_env ""); the client requires some string. */
export const NO_KEY = 'no-key';

export class ApiKeyMissingError extends BadInputError {
  constructor(envName: string) {
    super(
      `the API key variable ${envName} is not set: the llm host was handed no such key (keys are read from the environment of the server, or of evalctl, as it starts); set it (any value for a server that needs no key) and restart, or set config api_key_env to ""`,
    );
  }
}

/**
 * Why an llm node may not read its key from `name`, or undefined when it may. The key goes to the
 * run's `base_url`, which a run may choose, so a run may name only a model-API key's variable (one
 * ending in `_API_KEY`, or one `EVAL_LLM_KEY_VARS` lists, comma-separated), never the platform's own
 * `EVAL_` ones: otherwise anyone who may start a run could send any of the server's variables
 * (a database URL, a cloud secret) to an address of their choosing.
 */
export function keyVariableRefusal(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (name === '') return undefined;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    return `config api_key_env must be the name of an environment variable, got ${JSON.stringify(name)}`;
  if (!name.startsWith('EVAL_') && isModelKeyVariable(name, env)) return undefined;
  return `config api_key_env ${JSON.stringify(name)} does not name a model-API key: the key is sent to the run's base_url, so it must be a variable whose name ends in _API_KEY or one listed in EVAL_LLM_KEY_VARS in the server's environment (never an EVAL_ one)`;
}

/** The key in `envName`, as this process holds it (core/model-keys.ts: taken from the environment at start, or handed over). */
export function readApiKey(envName: string, env: NodeJS.ProcessEnv = process.env): string {
  if (envName === '') return NO_KEY;
  const key = modelKey(envName, env);
  if (!key) throw new ApiKeyMissingError(envName);
  return key;
}

/** `text` with every occurrence of `key` replaced (keys shorter than 4 characters are not secrets worth a false match). */
export function redact(text: string, key: string): string {
  if (key.length < 4 || key === NO_KEY) return text;
  return text.split(key).join('[redacted]');
}

/** `value` with `redact` applied to every string in it, at any depth (a model's answer: content, tool calls). */
export function redactDeep<T>(value: T, key: string): T {
  if (typeof value === 'string') return redact(value, key) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactDeep(v, key)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v, key)])) as T;
  }
  return value;
}

/** `value` with every key this process holds replaced in every string, at any depth (what a tool sent back). */
export function redactDeepModelKeys<T>(value: T): T {
  if (typeof value === 'string') return redactModelKeys(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactDeepModelKeys(v)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeepModelKeys(v)])) as T;
  }
  return value;
}
