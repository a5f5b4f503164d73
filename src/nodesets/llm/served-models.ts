/**
 * What a model endpoint serves now, from its models list (GET <base_url>/models, the
 * OpenAI-compatible `{ data: [{ id }] }`): checked before a retry plays, so a run whose endpoint
 * was switched to another model is refused instead of mixing two models in one run. A list is
 * free, where a one-token call would be paid for and cached; an endpoint without a list is not
 * checked (its answers still record the model they name).
 */
import type { GraphSpec, ReportedModel } from '../../core/types.js';
import type { FrozenModel } from '../../graph/model-setup.js';
import { NO_KEY } from './api-key.js';
import { ENDPOINT_CHECK_MAX_BYTES, limitedFetch } from './http-fetch.js';
import { readLlmConfig } from './llm-config.js';

/** How long the list may take: a retry waits no longer than this per endpoint. */
const LIST_TIMEOUT_MS = 5_000;
/** Names shown from a long list. */
const SHOWN = 5;

/** The ids the endpoint lists, or undefined when it gives no list (no route, an error, not JSON, too slow). */
export async function listedModels(baseURL: string, apiKey: string | undefined, signal?: AbortSignal): Promise<string[] | undefined> {
  const timeout = AbortSignal.timeout(LIST_TIMEOUT_MS);
  try {
    // Through the nodeset's own HTTP path (proxies as its model calls), and bounded: a list is small.
    const res = await limitedFetch(ENDPOINT_CHECK_MAX_BYTES)(`${baseURL}/models`, {
      headers: apiKey && apiKey !== NO_KEY ? { authorization: `Bearer ${apiKey}` } : {},
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { data?: unknown };
    if (!Array.isArray(body.data)) return undefined;
    return body.data.flatMap((m) => (typeof (m as { id?: unknown })?.id === 'string' ? [(m as { id: string }).id] : []));
  } catch {
    return undefined;
  }
}

/**
 * One line per model-backed node whose endpoint now lists neither the model the run asked for
 * nor any model its answers named: "the run played X …; the endpoint now serves Y".
 */
export async function changedModels(
  graph: GraphSpec,
  models: readonly FrozenModel[],
  reported: readonly ReportedModel[],
  env: NodeJS.ProcessEnv = process.env,
  signal?: AbortSignal,
): Promise<string[]> {
  const problems: string[] = [];
  const lists = new Map<string, Promise<string[] | undefined>>();
  for (const m of models) {
    const node = graph.nodes.find((n) => n.id === m.node);
    if (!node) continue;
    let baseURL: string;
    let apiKey: string | undefined;
    try {
      const c = readLlmConfig(node.config ?? {}, env);
      baseURL = c.baseURL;
      apiKey = c.apiKeyEnv === '' ? undefined : env[c.apiKeyEnv];
    } catch {
      continue;
    }
    const key = `${baseURL}\u0000${apiKey ?? ''}`;
    let list = lists.get(key);
    if (!list) {
      list = listedModels(baseURL, apiKey, signal);
      lists.set(key, list);
    }
    const listed = await list;
    if (!listed || listed.length === 0) continue;
    const answered = [...new Set(reported.filter((r) => r.node === m.node).map((r) => r.model))];
    if ([m.model, ...answered].some((name) => listed.includes(name))) continue;
    const played = answered.length > 0 && answered.join() !== m.model ? `${answered.join(', ')} (asked as ${m.model})` : m.model;
    const now = listed.slice(0, SHOWN).join(', ') + (listed.length > SHOWN ? ` and ${listed.length - SHOWN} more` : '');
    problems.push(`node "${m.node}": the run played model ${played}; ${m.baseUrl} now serves ${now}`);
  }
  return problems;
}
