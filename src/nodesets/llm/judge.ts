/**
 * `llm__judge`: a model grades the answer against the target with a rubric. The judge's calls
 * have their own per-episode budget, are cached like any call, and are `llm_call` events with
 * `role: "judge"`. The grade is the last `GRADE: C|P|I` line of the judge's reply (1, 0.5, 0).
 */
import type { NodeCallArgs, NodeOutputs } from '../../core/types.js';
import { callModel, InfraFailure, runOfEpisodeKey, type ChatMessage, type ModelCallResult } from './call-model.js';
import { readLlmConfig } from './llm-config.js';
import { recordedMessage, recordedText } from './recorded-message.js';
import { reportedFields } from './reported-model.js';

export const DEFAULT_RUBRIC =
  'The submission is correct when it states the same final answer as the expected answer; wording, units and formatting do not matter.';
const DEFAULT_JUDGE_CALLS = 3;

const JUDGE_SYSTEM =
  'You are a strict grader. Compare the submitted answer with the expected answer following the rubric. Explain briefly, then end with one line `GRADE: C` (correct), `GRADE: P` (partially correct) or `GRADE: I` (incorrect).';

const GRADES: Record<string, number> = { C: 1, P: 0.5, I: 0 };

const calls = new Map<string, number>();
export const evictJudge = (episodeKey: string): void => {
  calls.delete(episodeKey);
};

const targetText = (t: unknown): string => (Array.isArray(t) ? t.map(String).join(' OR ') : t === undefined || t === null ? '' : String(t));

function questionOf(messages: unknown): string {
  if (typeof messages === 'string') return messages;
  if (!Array.isArray(messages)) return '';
  const user = [...messages].reverse().find((m) => (m as { role?: unknown })?.role === 'user') as { content?: unknown } | undefined;
  return typeof user?.content === 'string' ? user.content : '';
}

/** The judge's prompt: rubric, question, submission, expected answer, one per line. */
export function judgePrompt(rubric: string, question: string, answer: string, target: string): ChatMessage[] {
  return [
    { role: 'system', content: JUDGE_SYSTEM },
    {
      role: 'user',
      content: `Rubric: ${rubric}\nQuestion: ${question.replaceAll('\n', ' ')}\nSubmitted answer: ${answer.replaceAll('\n', ' ')}\nExpected answer: ${target.replaceAll('\n', ' ')}`,
    },
  ];
}

/** The last `GRADE: X` line's letter, or undefined. */
export function parseGrade(reply: string): string | undefined {
  const all = [...reply.matchAll(/GRADE:\s*([CPI])\b/gi)];
  return all.length > 0 ? all[all.length - 1]![1]!.toUpperCase() : undefined;
}

export async function judge({ inputs, config, ctx, signal }: NodeCallArgs): Promise<NodeOutputs> {
  const c = readLlmConfig({ max_llm_calls: DEFAULT_JUDGE_CALLS, ...config });
  if (inputs.answer === undefined) throw new Error('input answer is required');
  const answer = typeof inputs.answer === 'string' ? inputs.answer : JSON.stringify(inputs.answer);
  const target = targetText(inputs.target);
  const rubric = typeof config.rubric === 'string' && config.rubric.trim() ? config.rubric : DEFAULT_RUBRIC;
  const used = calls.get(ctx.episodeKey) ?? 0;
  if (c.maxLlmCalls > 0 && used >= c.maxLlmCalls) {
    return {
      $ending: { kind: 'budget_exhausted', message: `the judge's budget of ${c.maxLlmCalls} call(s) is spent` },
      $events: [{ type: 'budget_exhausted', role: 'judge', llm_calls: used, max_llm_calls: c.maxLlmCalls }],
    };
  }
  const messages = judgePrompt(rubric, questionOf(inputs.messages), answer, target);
  let result: ModelCallResult;
  try {
    // Stream 1 of the episode's seed: the judge's backoff draws apart from the agent's.
    result = await callModel({
      config: c,
      messages,
      seed: ctx.seed ^ 0x5f3759df,
      callNumber: used,
      repeat: ctx.repeat,
      caller: runOfEpisodeKey(ctx.episodeKey),
      ...(ctx.runInFlight !== undefined ? { runInFlight: ctx.runInFlight } : {}),
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    if (!(err instanceof InfraFailure)) throw err;
    return {
      $ending: { kind: 'infra_error', message: err.message },
      $events: [
        ...err.retries,
        { type: 'infra', kind: 'failed', role: 'judge', ...(err.code ? { code: err.code } : {}), error: err.message },
      ],
    };
  }
  calls.set(ctx.episodeKey, used + 1);
  const reply = result.response.message.content ?? '';
  const grade = parseGrade(reply);
  const value = grade === undefined ? 0 : GRADES[grade]!;
  const latencyMs = Math.round(result.latencyMs * 1000) / 1000;
  return {
    score: {
      scorer: 'model_graded',
      value,
      answer,
      extracted: grade ?? null,
      target: inputs.target ?? null,
      explanation: grade === undefined ? `the judge gave no GRADE line: ${reply.slice(0, 200)}` : recordedText(reply, c.recordMaxChars),
    },
    metrics: { score: value, correct: value === 1 },
    usage: {
      judge_llm_calls: used + 1,
      judge_prompt_tokens: result.response.usage.prompt_tokens,
      judge_completion_tokens: result.response.usage.completion_tokens,
      judge_cache_hits: result.cached ? 1 : 0,
    },
    done: true,
    $events: [
      ...result.retries,
      {
        type: 'llm_call',
        role: 'judge',
        model: c.model,
        ...reportedFields(result.response),
        call: used + 1,
        messages: messages.map((m) => recordedMessage(m, c.recordMaxChars)),
        response: recordedMessage(result.response.message, c.recordMaxChars),
        finish_reason: result.response.finish_reason,
        usage: result.response.usage,
        latency_ms: latencyMs,
        cached: result.cached,
        retries: result.retries.length,
      },
    ],
  };
}
