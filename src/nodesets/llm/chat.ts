/**
 * `llm__chat`: one model turn of an episode's conversation. The conversation and the call count
 * live in keyed state (episodeKey) until eviction. The first call starts the conversation from the
 * system prompt and `messages`; later calls append the `tool_results` the tool node sent back.
 * Every call is an `llm_call` event; a spent budget or an endpoint that keeps failing ends the
 * episode through `$ending`, with the usage so far.
 */
import type { NodeCallArgs, NodeOutputs } from '../../core/types.js';
import { callModel, InfraFailure, runOfEpisodeKey, type ChatMessage, type ModelCallResult } from './call-model.js';
import { readLlmConfig } from './llm-config.js';
import { recordedMessage } from './recorded-message.js';
import { redactDeepModelKeys } from './api-key.js';
import type { CachedResponse } from './response-cache.js';
import { reportedFields } from './reported-model.js';
import { emptyUsage, type LlmUsage } from './usage.js';
import { createHash } from 'node:crypto';

interface EpisodeState {
  conversation: ChatMessage[];
  /** How many messages of the conversation were already sent (the rest are new for the next call's event). */
  sent: number;
  usage: LlmUsage;
  /** The outputs of the last final answer, repeated when the node fires again with nothing new. */
  last?: NodeOutputs;
}

const states = new Map<string, EpisodeState>();

export const evictChat = (episodeKey: string): void => {
  states.delete(episodeKey);
};

/** Episodes with live state (for tests and stats). */
export const liveChatEpisodes = (): number => states.size;

function readMessages(v: unknown, port: string): ChatMessage[] {
  if (typeof v === 'string') return [{ role: 'user', content: v }];
  if (!Array.isArray(v)) throw new Error(`input ${port} must be an array of chat messages or a string, got ${JSON.stringify(v)}`);
  return v.map((m, i) => {
    if (typeof m !== 'object' || m === null || typeof (m as { role?: unknown }).role !== 'string') {
      throw new Error(`input ${port}[${i}] must be a chat message { role, content }, got ${JSON.stringify(m)}`);
    }
    const msg = m as ChatMessage;
    return { ...msg, content: msg.content === undefined ? null : msg.content };
  });
}

const sha256 = (v: unknown): string => createHash('sha256').update(JSON.stringify(v)).digest('hex');

export async function chat({ inputs, config, ctx, signal }: NodeCallArgs): Promise<NodeOutputs> {
  const c = readLlmConfig(config);
  let state = states.get(ctx.episodeKey);
  if (!state) {
    if (inputs.messages === undefined) throw new Error('input messages is required on the first call of an episode');
    const conversation: ChatMessage[] = c.systemPrompt ? [{ role: 'system', content: c.systemPrompt }] : [];
    conversation.push(...readMessages(inputs.messages, 'messages'));
    state = { conversation, sent: 0, usage: emptyUsage() };
    states.set(ctx.episodeKey, state);
  } else if (inputs.tool_results !== undefined) {
    // A key a tool got hold of goes no further: not to the endpoint, not into an event.
    state.conversation.push(...redactDeepModelKeys(readMessages(inputs.tool_results, 'tool_results')));
  } else if (state.last) {
    // Nothing new since the final answer: no call, the same answer again.
    return { ...state.last, usage: { ...state.usage } };
  }

  const usage = state.usage;
  if (c.maxLlmCalls > 0 && usage.llm_calls >= c.maxLlmCalls) {
    const message = `the call budget of ${c.maxLlmCalls} model call(s) is spent`;
    return {
      usage: { ...usage },
      $ending: { kind: 'budget_exhausted', message },
      $events: [{ type: 'budget_exhausted', llm_calls: usage.llm_calls, max_llm_calls: c.maxLlmCalls }],
    };
  }
  // Checked before the call, on the counts so far: a call's own size is known only once it is paid for.
  const tokens = usage.prompt_tokens + usage.completion_tokens;
  if (c.maxEpisodeTokens > 0 && tokens >= c.maxEpisodeTokens) {
    const message = `the token budget of ${c.maxEpisodeTokens} is spent (${tokens} tokens in ${usage.llm_calls} call(s))`;
    return {
      usage: { ...usage },
      $ending: { kind: 'budget_exhausted', message },
      $events: [{ type: 'budget_exhausted', llm_calls: usage.llm_calls, tokens, max_episode_tokens: c.maxEpisodeTokens }],
    };
  }

  const sentBefore = state.sent;
  const newMessages = state.conversation.slice(sentBefore);
  const prefixHash = sentBefore > 0 ? sha256(state.conversation.slice(0, sentBefore)) : undefined;
  let result: ModelCallResult;
  try {
    result = await callModel({
      config: c,
      messages: state.conversation,
      seed: ctx.seed,
      callNumber: usage.llm_calls,
      repeat: ctx.repeat,
      caller: runOfEpisodeKey(ctx.episodeKey),
      ...(ctx.runInFlight !== undefined ? { runInFlight: ctx.runInFlight } : {}),
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    if (!(err instanceof InfraFailure)) throw err;
    usage.llm_retries += err.retries.length;
    return {
      usage: { ...usage },
      $ending: { kind: 'infra_error', message: err.message },
      $events: [...err.retries, { type: 'infra', kind: 'failed', ...(err.code ? { code: err.code } : {}), error: err.message }],
    };
  }
  const response = withToolCallIds(result.response, usage.llm_calls + 1);
  const latencyMs = Math.round(result.latencyMs * 1000) / 1000;
  usage.llm_calls++;
  usage.prompt_tokens += response.usage.prompt_tokens;
  usage.completion_tokens += response.usage.completion_tokens;
  usage.llm_latency_ms = Math.round((usage.llm_latency_ms + latencyMs) * 1000) / 1000;
  usage.llm_retries += result.retries.length;
  if (result.cached) usage.llm_cache_hits++;
  state.conversation.push(response.message);
  state.sent = state.conversation.length;

  const toolCalls = response.message.tool_calls;
  const recorded = recordedMessage(response.message, c.recordMaxChars);
  const event = {
    type: 'llm_call',
    model: c.model,
    ...reportedFields(response),
    call: usage.llm_calls,
    ...(prefixHash ? { prior_messages: sentBefore, prior_sha256: prefixHash } : {}),
    messages: newMessages.map((m) => recordedMessage(m, c.recordMaxChars)),
    response: recorded,
    ...(recorded.tool_calls ? { tool_calls: recorded.tool_calls } : {}),
    finish_reason: response.finish_reason,
    usage: response.usage,
    latency_ms: latencyMs,
    cached: result.cached,
    retries: result.retries.length,
  };
  const out: NodeOutputs = { message: response.message, usage: { ...usage }, $events: [...result.retries, event] };
  if (toolCalls) {
    out.tool_calls = toolCalls;
    state.last = undefined;
  } else {
    out.answer = response.message.content ?? '';
    state.last = { message: response.message, answer: out.answer };
  }
  return out;
}

/**
 * `response` with an id on each tool call that came without one (some OpenAI-compatible servers
 * leave it out): `call_<n>_<k>`, the episode's model call number and the call's place in the
 * list, so the tools node can answer it and the id is the same on every replay. A copy: a cached
 * or shared answer is not changed.
 */
function withToolCallIds(response: CachedResponse, callNumber: number): CachedResponse {
  const calls = response.message.tool_calls;
  if (!calls?.some((t) => !hasId(t))) return response;
  const tool_calls = calls.map((t, k) => (hasId(t) || typeof t !== 'object' || t === null ? t : { ...t, id: `call_${callNumber}_${k}` }));
  return { ...response, message: { ...response.message, tool_calls } };
}

const hasId = (t: unknown): boolean =>
  typeof t === 'object' && t !== null && typeof (t as { id?: unknown }).id === 'string' && (t as { id: string }).id !== '';
