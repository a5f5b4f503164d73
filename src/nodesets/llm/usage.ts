/** Per-episode cumulative usage of the model, the `usage` output (routed to a graphOut's `metrics`). */
export interface LlmUsage {
  llm_calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  llm_latency_ms: number;
  llm_retries: number;
  llm_cache_hits: number;
}

export const emptyUsage = (): LlmUsage => ({
  llm_calls: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  llm_latency_ms: 0,
  llm_retries: 0,
  llm_cache_hits: 0,
});
