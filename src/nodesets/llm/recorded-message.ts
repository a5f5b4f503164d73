/**
 * What an event keeps of a chat message: its content and each tool call's arguments cut to
 * `record_max_chars`, with a marker saying how much was left out. The conversation itself (sent to
 * the endpoint, handed to the tools, hashed in `prior_sha256`) is never cut: only its record.
 */
import type { ChatMessage } from './call-model.js';

/** `text` cut to `maxChars`, followed by a marker naming how many characters were left out. */
export function recordedText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}[… ${text.length - maxChars} more characters not recorded]`;
}

function recordedToolCall(call: unknown, maxChars: number): unknown {
  const fn = (call as { function?: { arguments?: unknown } } | null)?.function;
  if (typeof fn?.arguments !== 'string' || fn.arguments.length <= maxChars) return call;
  return { ...(call as object), function: { ...fn, arguments: recordedText(fn.arguments, maxChars) } };
}

/** `m` as an event records it: the same object when nothing in it is longer than `maxChars`. */
export function recordedMessage<M extends ChatMessage>(m: M, maxChars: number): M {
  const longContent = typeof m.content === 'string' && m.content.length > maxChars;
  const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as unknown[]) : undefined;
  const cutCalls = calls?.map((c) => recordedToolCall(c, maxChars));
  const callsCut = cutCalls?.some((c, i) => c !== calls![i]) === true;
  if (!longContent && !callsCut) return m;
  return {
    ...m,
    ...(longContent ? { content: recordedText(m.content as string, maxChars) } : {}),
    ...(callsCut ? { tool_calls: cutCalls } : {}),
  };
}
