/**
 * The llm nodeset's preflight (manifest `preflight`): before a run's first episode, each model
 * endpoint its nodes call is asked once for its models list, with the key the llm host would
 * send, so a dead endpoint, a wrong URL or a refused key fails the run in seconds, naming the
 * URL and the answer, instead of ending every play INFRA_ERROR. An endpoint without a models
 * list (404, 405) is asked for one token of a chat completion instead.
 */
import type { NodesetPreflight, PreflightNode } from '../../core/types.js';
import { CodedError, errorMessage } from '../../errors.js';
import { readApiKey, redact } from './api-key.js';
import { ENDPOINT_CHECK_MAX_BYTES, limitedFetch } from './http-fetch.js';
import { readLlmConfig } from './llm-config.js';

/** How long one request of the check may take. */
export const CHECK_TIMEOUT_MS = 5000;
/** Characters of an error answer's body quoted in the message. */
const QUOTED_CHARS = 200;

export class EndpointCheckError extends CodedError {
  readonly url: string;
  constructor(url: string, message: string, options?: { cause?: unknown }) {
    super('PREFLIGHT_FAILED', message, options);
    this.url = url;
  }
}

interface Endpoint {
  baseURL: string;
  model: string;
  key: string;
  nodes: string[];
}

/** Checks each distinct (base URL, key variable) the nodes use, in node order; rejects with the first that fails. */
export const checkEndpoints: NodesetPreflight = async (nodes, { env, signal }) => {
  for (const endpoint of endpointsOf(nodes, env)) await checkEndpoint(endpoint, signal);
};

export default checkEndpoints;

function endpointsOf(nodes: readonly PreflightNode[], env: NodeJS.ProcessEnv): Endpoint[] {
  const byKey = new Map<string, Endpoint>();
  for (const node of nodes) {
    let config: ReturnType<typeof readLlmConfig>;
    try {
      config = readLlmConfig(node.config, env);
    } catch {
      // A config the host would refuse fails every call as an ERROR naming it; that is not the endpoint's fault.
      continue;
    }
    const id = `${config.baseURL}\n${config.apiKeyEnv}`;
    const known = byKey.get(id);
    if (known) {
      known.nodes.push(node.id);
      continue;
    }
    byKey.set(id, { baseURL: config.baseURL, model: config.model, key: readApiKey(config.apiKeyEnv, env), nodes: [node.id] });
  }
  return [...byKey.values()];
}

async function checkEndpoint(e: Endpoint, signal: AbortSignal): Promise<void> {
  const listed = await ask(e, 'GET', `${e.baseURL}/models`, undefined, signal);
  if (listed.ok || listed.status === 429) return;
  if (listed.status === 404 || listed.status === 405) {
    const body = JSON.stringify({ model: e.model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 });
    const chat = await ask(e, 'POST', `${e.baseURL}/chat/completions`, body, signal);
    if (chat.ok || chat.status === 429) return;
    throw refusal(e, 'POST', `${e.baseURL}/chat/completions`, chat);
  }
  throw refusal(e, 'GET', `${e.baseURL}/models`, listed);
}

interface Answer {
  ok: boolean;
  status: number;
  text: string;
}

async function ask(e: Endpoint, method: string, url: string, body: string | undefined, signal: AbortSignal): Promise<Answer> {
  const timeout = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  try {
    const res = await limitedFetch(ENDPOINT_CHECK_MAX_BYTES)(url, {
      method,
      headers: { authorization: `Bearer ${e.key}`, accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body } : {}),
      signal: AbortSignal.any([signal, timeout]),
    });
    const text = res.ok ? '' : await res.text().catch(() => '');
    if (res.ok) await res.body?.cancel().catch(() => {});
    return { ok: res.ok, status: res.status, text };
  } catch (err) {
    if (signal.aborted && !timeout.aborted) throw err;
    const what = timeout.aborted ? `no answer within ${CHECK_TIMEOUT_MS} ms` : connectionFailure(err);
    throw new EndpointCheckError(e.baseURL, `${what} at ${e.baseURL} (${method} ${url}, ${nodesOf(e)})`, { cause: err });
  }
}

function refusal(e: Endpoint, method: string, url: string, a: Answer): EndpointCheckError {
  const quoted = redact(a.text.replace(/\s+/g, ' ').trim(), e.key).slice(0, QUOTED_CHARS);
  return new EndpointCheckError(
    e.baseURL,
    `HTTP ${a.status} at ${e.baseURL} (${method} ${url}, ${nodesOf(e)})${quoted ? `: ${quoted}` : ''}`,
  );
}

const nodesOf = (e: Endpoint): string => `node${e.nodes.length > 1 ? 's' : ''} ${e.nodes.map((n) => `"${n}"`).join(', ')}`;

const CONNECTION_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
};

/** "connection refused" for an ECONNREFUSED anywhere in the cause chain, else the deepest message. */
function connectionFailure(err: unknown): string {
  let deepest = err;
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES[code]) return CONNECTION_CODES[code];
    deepest = e;
  }
  return `connection failed: ${errorMessage(deepest)}`;
}
