/**
 * Host secrets: each host the runtime spawns gets a secret of its own, and answers only
 * requests that present it (`Authorization: Bearer <secret>`), so another local user or a
 * web page rebound to 127.0.0.1 cannot drive a host directly. The spawner hands the secret to
 * the host in EVAL_HOST_SECRET, which the host removes from its environment as it starts; the
 * callers of a host find its secret here, by URL. Secrets live only in memory and in the
 * environment of the one process that needs them, never in a file, a log or an API answer.
 * The comparison is the API token's (core/bearer.ts): one parser, one constant-time compare.
 */
import { bearerOf, sameToken } from '../core/bearer.js';
import { isModelKeyVariable, keyFingerprints } from '../core/model-keys.js';
import { SECRET_FINGERPRINTS_ENV } from '../core/secret-fingerprints.js';

/** The variable a spawned host reads its own secret from (and deletes). */
export const HOST_SECRET_ENV = 'EVAL_HOST_SECRET';
/** The variable an eval process reads the secrets of its borrowed shared hosts from (JSON, URL → secret; deleted). */
export const HOST_SECRETS_ENV = 'EVAL_HOST_SECRETS';
/** Variables no host is given: the API token (hosts never call the API) and other hosts' secrets. */
const WITHHELD_FROM_HOSTS = ['EVAL_API_TOKEN', HOST_SECRET_ENV, HOST_SECRETS_ENV];

/** URL origin → secret of the hosts this process may call. */
const secrets = new Map<string, string>();

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** Remembers the secret of the host at `url` (its callers in this process present it). */
export function rememberHostSecret(url: string, secret: string): void {
  const origin = originOf(url);
  if (origin !== undefined && secret !== '') secrets.set(origin, secret);
}

/** Forgets the secret of the host at `url`, if it is still `secret` (a new host may have its port by now). */
export function forgetHostSecret(url: string, secret?: string): void {
  const origin = originOf(url);
  if (origin !== undefined && (secret === undefined || secrets.get(origin) === secret)) secrets.delete(origin);
}

/** The secret to present to the host at `url`; undefined for a host this process was not told of (a remote host registered by URL). */
export function hostSecretFor(url: string): string | undefined {
  const origin = originOf(url);
  return origin === undefined ? undefined : secrets.get(origin);
}

/** `{ EVAL_HOST_SECRETS: … }` for a child process that will call the hosts at `urls`; empty when none has a secret. */
export function hostSecretsEnv(urls: Iterable<string>): Record<string, string> {
  const out = hostSecretsOf(urls);
  return Object.keys(out).length > 0 ? { [HOST_SECRETS_ENV]: JSON.stringify(out) } : {};
}

/** URL → secret of the hosts at `urls` this process has a secret for (to hand to a worker thread that calls them). */
export function hostSecretsOf(urls: Iterable<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const url of urls) {
    const s = hostSecretFor(url);
    if (s !== undefined) out[url] = s;
  }
  return out;
}

/** Reads EVAL_HOST_SECRETS into this process's secrets and removes it from the environment. */
export function adoptHostSecretsFromEnv(env: NodeJS.ProcessEnv = process.env): void {
  const raw = env[HOST_SECRETS_ENV];
  delete env[HOST_SECRETS_ENV];
  if (!raw) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return;
  }
  if (typeof parsed !== 'object' || parsed === null) return;
  for (const [url, secret] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof secret === 'string') rememberHostSecret(url, secret);
  }
}

/** A host's own secret from EVAL_HOST_SECRET, removed from the environment before any nodeset code runs. */
export function takeOwnHostSecret(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const secret = env[HOST_SECRET_ENV];
  delete env[HOST_SECRET_ENV];
  return secret ? secret : undefined;
}

/**
 * The environment a host starts with: this process's, less what hosts must not see (the
 * withheld variables and every model key: a host that calls a model is handed its keys
 * another way, core/model-keys.ts), plus `extra` (model keys in it are dropped too).
 */
export function hostEnvironment(extra: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  const fingerprints = keyFingerprints();
  if (fingerprints !== undefined) env[SECRET_FINGERPRINTS_ENV] = fingerprints;
  const isKey = (k: string): boolean => isModelKeyVariable(k) || isModelKeyVariable(k, extra);
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !WITHHELD_FROM_HOSTS.includes(k) && !isKey(k)) env[k] = v;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined && !isKey(k)) env[k] = v;
  return env;
}

/** Whether an Authorization header value presents `secret`, compared in time that does not depend on where they differ. */
export function presentsSecret(authorization: string | undefined, secret: string): boolean {
  return sameToken(bearerOf(authorization), secret);
}
