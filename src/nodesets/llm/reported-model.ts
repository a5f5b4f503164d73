/**
 * The fields of an `llm_call` event that say what answered: `reported_model` (the model the
 * provider names in its answer) and `system_fingerprint`. Any node's event may carry them; the
 * eval process counts them per episode (eval-process/reported-models.ts) for the run's manifest.
 */
import type { CachedResponse } from './response-cache.js';

export function reportedFields(response: CachedResponse): { reported_model?: string; system_fingerprint?: string } {
  return {
    ...(response.model !== undefined ? { reported_model: response.model } : {}),
    ...(response.system_fingerprint !== undefined ? { system_fingerprint: response.system_fingerprint } : {}),
  };
}
