/**
 * Model-API keys: read from the environment once, as a process starts, and removed from it, so
 * that no child process or worker thread inherits them; kept here, in memory, for the code that
 * calls a model. A host that calls a model (a manifest with `"modelKeys": true`) is handed them:
 * a child process over a pipe of its own (MODEL_KEYS_FD_ENV names its descriptor), a worker
 * thread in its workerData, an eval process in its go message. Every other process starts
 * without them; the fingerprints (secret-fingerprints.ts) go everywhere, for redaction.
 */
import { readFileSync } from 'node:fs';
import { fingerprintSecrets, SECRET_FINGERPRINTS_ENV } from './secret-fingerprints.js';

/** A model-API key's variable, by the usual naming (OPENAI_API_KEY, ANTHROPIC_API_KEY, VLLM_API_KEY …). */
const KEY_VARIABLE = /^[A-Z][A-Z0-9_]*_API_KEY$/;

/** The variable naming the descriptor a spawned process reads its keys from (JSON, name → value; then closed). */
export const MODEL_KEYS_FD_ENV = 'EVAL_MODEL_KEYS_FD';

/** The names EVAL_LLM_KEY_VARS lists (comma-separated): more variables that hold model keys. */
export function listedKeyVariables(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.EVAL_LLM_KEY_VARS ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** Whether `name` holds a model key: it ends in `_API_KEY` or EVAL_LLM_KEY_VARS lists it. */
export function isModelKeyVariable(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return KEY_VARIABLE.test(name) || listedKeyVariables(env).includes(name);
}

const keys = new Map<string, string>();

function publishFingerprints(env: NodeJS.ProcessEnv): void {
  if (keys.size > 0) env[SECRET_FINGERPRINTS_ENV] = fingerprintSecrets(keys.values(), env[SECRET_FINGERPRINTS_ENV]);
}

/**
 * Moves every model key out of `env` into this process's memory and publishes their
 * fingerprints in `env`. Called first thing by every entry point; idempotent.
 */
export function takeModelKeys(env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, value] of Object.entries(env)) {
    if (!isModelKeyVariable(name, env)) continue;
    if (value) keys.set(name, value);
    delete env[name];
  }
  publishFingerprints(env);
}

/** Keys handed over by a parent (a pipe, workerData, a go message); anything but name → string is ignored. */
export function adoptModelKeys(record: unknown, env: NodeJS.ProcessEnv = process.env): void {
  if (typeof record !== 'object' || record === null) return;
  for (const [name, value] of Object.entries(record)) if (typeof value === 'string' && value !== '') keys.set(name, value);
  publishFingerprints(env);
}

/** Reads the keys a parent wrote on the descriptor MODEL_KEYS_FD_ENV names (to its end), closes it, and forgets the variable. */
export function readModelKeysFromFd(env: NodeJS.ProcessEnv = process.env): void {
  const fd = Number(env[MODEL_KEYS_FD_ENV]);
  delete env[MODEL_KEYS_FD_ENV];
  if (!Number.isInteger(fd) || fd < 3) return;
  let text: string;
  try {
    text = readFileSync(fd, 'utf8');
  } catch {
    return;
  }
  try {
    adoptModelKeys(JSON.parse(text), env);
  } catch {
    // A parent that died before writing leaves an empty pipe: no keys.
  }
}

/** The key in variable `name`: from this process's memory, else (a process no entry point started, such as a test) its environment. */
export function modelKey(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return keys.get(name) ?? (env[name] || undefined);
}

/**
 * Every key this process holds, name → value: what a host that calls a model is handed. As for
 * modelKey, keys still in the environment (a process no entry point started) count too.
 */
export function heldModelKeys(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value && isModelKeyVariable(name, env)) out[name] = value;
  return Object.assign(out, Object.fromEntries(keys));
}

/**
 * The fingerprints of every key this process holds (published in `env` as it goes), for a
 * child that must redact them: undefined when there are none.
 */
export function keyFingerprints(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const values = Object.values(heldModelKeys(env));
  if (values.length > 0) env[SECRET_FINGERPRINTS_ENV] = fingerprintSecrets(values, env[SECRET_FINGERPRINTS_ENV]);
  return env[SECRET_FINGERPRINTS_ENV];
}

/** `env` less every model key, and less the values undefined. */
export function withoutModelKeys(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && !isModelKeyVariable(name, env) && !isModelKeyVariable(name)) out[name] = value;
  return out;
}

/** `text` with every key this process holds replaced (keys shorter than 4 characters are not secrets worth a false match). */
export function redactModelKeys(text: string): string {
  let out = text;
  for (const key of Object.values(heldModelKeys())) if (key.length >= 4) out = out.split(key).join('[redacted]');
  return out;
}
