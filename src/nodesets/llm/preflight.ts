/**
 * Checks before a run is queued that every llm node's key variable is set in this process's
 * environment (read at start: core/model-keys.ts) and that it names a model, so a missing key or model is
 * one clear error instead of an ERROR in every episode. Names the node and the variable, never a value.
 */
import type { GraphSpec } from '../../core/types.js';
import { modelKey } from '../../core/model-keys.js';
import { keyVariableRefusal } from './api-key.js';
import { DEFAULT_API_KEY_ENV } from './llm-config.js';

const LLM_TYPES = new Set(['llm__chat', 'llm__judge']);

/** One problem per llm node whose api_key_env names an unset variable; empty when all are set. */
export function missingApiKeys(graph: GraphSpec, env: NodeJS.ProcessEnv = process.env): string[] {
  const problems: string[] = [];
  for (const node of graph.nodes) {
    if (!LLM_TYPES.has(node.type)) continue;
    const name = node.config?.api_key_env ?? DEFAULT_API_KEY_ENV;
    if (typeof name !== 'string' || name === '') continue;
    // A name that may not be read is refused without saying whether it is set.
    const refusal = keyVariableRefusal(name, env);
    if (refusal !== undefined) problems.push(`node "${node.id}" (${node.type}): ${refusal}`);
    else if (!modelKey(name, env)) {
      problems.push(
        `node "${node.id}" (${node.type}) reads its API key from ${name}, which is not set in the server's environment (set it, or set config api_key_env to "" for an endpoint without a key)`,
      );
    }
  }
  return problems;
}
