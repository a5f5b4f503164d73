/**
 * An episode's event history (GraphQL `Episode.events`, from events.jsonl) read as a
 * conversation: the messages each model call sent, its reply with tool calls, token counts,
 * latency, cache and retry marks, each tool call with its arguments and result, and notices
 * for retries, infrastructure failures and spent budgets. Events of an unknown type become
 * notices too, so nothing the history holds is hidden.
 */

export interface ToolCallRef {
  id: string;
  name: string;
  /** The arguments as the model wrote them (a JSON string). */
  arguments: string;
}

interface Base {
  key: string;
  step: number | null;
  nodeId: string;
}

export type ChatItem =
  | (Base & { kind: 'message'; role: string; content: string; toolCallId?: string })
  | (Base & {
      kind: 'assistant';
      content: string;
      toolCalls: ToolCallRef[];
      model?: string;
      call?: number;
      promptTokens?: number;
      completionTokens?: number;
      latencyMs?: number;
      cached: boolean;
      retries: number;
      finishReason?: string;
    })
  | (Base & {
      kind: 'tool';
      toolCallId?: string;
      name: string;
      arguments: string;
      /** What the model was answered: stdout, or `error: …`. */
      result: string;
      stderr: string;
      exitCode: number | null;
      durationMs?: number;
      timedOut: boolean;
      failed: boolean;
    })
  | (Base & { kind: 'notice'; level: 'retry' | 'error' | 'budget' | 'info'; text: string; event: Record<string, unknown> });

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Message content as text: a string, or the text parts of a content array. */
export function contentText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v == null) return '';
  if (Array.isArray(v)) return v.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : JSON.stringify(p))).join('\n');
  return JSON.stringify(v);
}

function toolCallsOf(v: unknown): ToolCallRef[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isObj).map((c, i) => {
    const fn = isObj(c.function) ? c.function : {};
    const args = fn.arguments;
    return {
      id: str(c.id) ?? `#${i}`,
      name: str(fn.name) ?? '?',
      arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
    };
  });
}

/** Tool-call arguments for display: pretty JSON when they parse, as written otherwise. */
export function prettyArguments(args: string): string {
  try {
    const v: unknown = JSON.parse(args);
    return isObj(v) && Object.keys(v).length === 0 ? '' : JSON.stringify(v, null, 1).replace(/\n\s*/g, ' ');
  } catch {
    return args;
  }
}

function isRetry(ev: Obj): boolean {
  return ev.type === 'infra_retry' || (ev.type === 'infra' && ev.kind === 'retry');
}

export function conversationOf(events: readonly unknown[]): ChatItem[] {
  const items: ChatItem[] = [];
  // Tool results already shown from the tool node's own events are not repeated when the next model call sends them.
  const shownToolResults = new Set<string>();
  events.forEach((raw, i) => {
    if (!isObj(raw)) return;
    const ev = raw;
    const base: Base = { key: String(i), step: num(ev.step) ?? null, nodeId: str(ev.nodeId) ?? '' };
    if (ev.type === 'llm_call') {
      const messages = Array.isArray(ev.messages) ? ev.messages : [];
      messages.forEach((m, j) => {
        if (!isObj(m)) return;
        const role = str(m.role) ?? 'user';
        const toolCallId = str(m.tool_call_id);
        if (role === 'tool' && toolCallId !== undefined && shownToolResults.has(toolCallId)) return;
        items.push({
          ...base,
          key: `${i}.${j}`,
          kind: 'message',
          role,
          content: contentText(m.content),
          ...(toolCallId !== undefined ? { toolCallId } : {}),
        });
      });
      const response = isObj(ev.response) ? ev.response : {};
      const usage = isObj(ev.usage) ? ev.usage : {};
      const item: ChatItem = {
        ...base,
        kind: 'assistant',
        content: contentText(response.content),
        toolCalls: toolCallsOf(response.tool_calls ?? ev.tool_calls),
        cached: ev.cached === true,
        retries: num(ev.retries) ?? 0,
      };
      const model = str(ev.model);
      if (model !== undefined) item.model = model;
      const call = num(ev.call);
      if (call !== undefined) item.call = call;
      const pt = num(usage.prompt_tokens);
      if (pt !== undefined) item.promptTokens = pt;
      const ct = num(usage.completion_tokens);
      if (ct !== undefined) item.completionTokens = ct;
      const lat = num(ev.latency_ms);
      if (lat !== undefined) item.latencyMs = lat;
      const fr = str(ev.finish_reason);
      if (fr !== undefined) item.finishReason = fr;
      items.push(item);
      return;
    }
    if (ev.type === 'tool_call') {
      const toolCallId = str(ev.tool_call_id);
      if (toolCallId !== undefined) shownToolResults.add(toolCallId);
      const error = str(ev.error);
      const stdout = str(ev.stdout) ?? '';
      items.push({
        ...base,
        kind: 'tool',
        ...(toolCallId !== undefined ? { toolCallId } : {}),
        name: str(ev.name) ?? '?',
        arguments: typeof ev.arguments === 'string' ? ev.arguments : JSON.stringify(ev.arguments ?? {}),
        result: error !== undefined ? `error: ${error}` : stdout,
        stderr: str(ev.stderr) ?? '',
        exitCode: num(ev.exit_code) ?? null,
        ...(num(ev.duration_ms) !== undefined ? { durationMs: num(ev.duration_ms) } : {}),
        timedOut: ev.timed_out === true,
        failed: error !== undefined,
      });
      return;
    }
    if (isRetry(ev)) {
      const status = num(ev.status) ?? str(ev.status);
      const attempt = num(ev.attempt);
      const delay = num(ev.delay_ms);
      const text = [
        `retry${attempt !== undefined ? ` ${attempt}` : ''}`,
        status !== undefined ? `after ${status}` : undefined,
        str(ev.error),
        delay !== undefined ? `(waited ${Math.round(delay)} ms)` : undefined,
      ]
        .filter(Boolean)
        .join(' ');
      items.push({ ...base, kind: 'notice', level: 'retry', text, event: ev });
      return;
    }
    if (ev.type === 'infra' || ev.type === 'infra_error') {
      items.push({
        ...base,
        kind: 'notice',
        level: 'error',
        text: `infrastructure failure: ${str(ev.error) ?? str(ev.message) ?? 'unknown'}`,
        event: ev,
      });
      return;
    }
    if (ev.type === 'budget_exhausted') {
      const used = num(ev.llm_calls);
      const max = num(ev.max_llm_calls);
      const text = used !== undefined && max !== undefined ? `call budget spent: ${used} of ${max} model calls` : 'budget spent';
      items.push({ ...base, kind: 'notice', level: 'budget', text, event: ev });
      return;
    }
    items.push({ ...base, kind: 'notice', level: 'info', text: str(ev.type) ?? 'event', event: ev });
  });
  return items;
}

/** Totals over an episode's model calls, for the conversation's header. */
export function conversationTotals(items: readonly ChatItem[]): {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
  cached: number;
  retries: number;
  toolCalls: number;
} {
  const t = { calls: 0, promptTokens: 0, completionTokens: 0, latencyMs: 0, cached: 0, retries: 0, toolCalls: 0 };
  for (const it of items) {
    if (it.kind === 'assistant') {
      t.calls++;
      t.promptTokens += it.promptTokens ?? 0;
      t.completionTokens += it.completionTokens ?? 0;
      t.latencyMs += it.latencyMs ?? 0;
      if (it.cached) t.cached++;
      t.retries += it.retries;
    } else if (it.kind === 'tool') t.toolCalls++;
  }
  return t;
}
