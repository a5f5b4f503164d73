/**
 * A stand-in OpenAI-compatible chat-completions server for tests and benches. It speaks the
 * real wire format (POST /v1/chat/completions: id, object, created, model, choices[].message
 * with content or tool_calls, finish_reason, usage) and answers deterministically from the
 * request body alone:
 *
 * 0. Tools offered and the first user message starts with `Task <id>:` for an id of STUB_SCRIPTS
 *    (stub-scripts.ts) → that script's next tool call (one per turn, counted by the `tool` messages
 *    so far), then its final answer: scripted agents for the shell_tasks dataset.
 * 1. Tools offered and no `tool` message in the conversation yet → one tool call of the first
 *    tool (its id `call_<hash of the request body>`, so it does not depend on arrival order), arguments `{"expression": "<a> <op> <b>"}` when the last user message holds an
 *    arithmetic expression, `{"code": "<last user content>"}` when the tool takes `code` (the
 *    python tool: the user message is the program), `{"command": …}` when it takes `command` (bash), else `{"input": "<last user content>"}`;
 *    finish_reason "tool_calls".
 * 2. The last message is a `tool` message → its content is the answer. For a built-in word
 *    problem (rule 6) the stub first checks the tool's result, as a careful agent would: after the
 *    first tool result it asks the calculator for the inverse operation (`<result> - <b>` for
 *    `<a> + <b>`, …), and after that it answers the first result. So react_llm takes three model
 *    calls per arith sample (a budget of 2 runs out), and the loop's answer is the tool's.
 * 3. A grading request (the last user message holds the lines `Submitted answer: …` and
 *    `Expected answer: …`) → `GRADE: C` when both agree after trimming and lower-casing, else `GRADE: I`.
 * 4. The last user message lists choices (lines `A. …`, `B. …`) → `options.choiceLetter` (default "A").
 * 5. The last user message holds `<a> <op> <b>` (op one of + - * x × /) → the result, as a plain number.
 * 6. The last user message is one of the built-in `arith` word problems (the five templates of
 *    scripts/generate-datasets.mjs) → the number, computed from the numbers in the text. Like a
 *    small model, the stub gets the two-step template ("buys P packs … with N in each pack, then
 *    loses L") wrong on purpose: it answers P × N and forgets the loss, so a fixed fifth of the
 *    samples (metadata.cluster `multi_step`) is answered wrongly and a run's accuracy is neither 0
 *    nor 1. With tools offered (rule 1) the calculator is asked for that same expression.
 * 7. A system message asks to classify sentiment as positive, negative or neutral → a label from a
 *    small fixed word list (SENTIMENT_WORDS): a positive word → positive, a negative one →
 *    negative, neither → neutral. The list is deliberately naive ("tears" reads negative, "made
 *    our evening" has no positive word), so the confusion matrix is not diagonal.
 * 8. Anything else → `echo: <last user content>`.
 *
 * Rules 6 and 7 follow only the text of the request, never an answer key: the stub cannot peek at
 * a target, and which samples it gets wrong is visible from these rules alone.
 *
 * usage: prompt_tokens = ceil(characters of every message's content / 4), completion_tokens =
 * ceil(characters of the answer (or the tool call's arguments) / 4), at least 1 each.
 *
 * Faults (deterministic): `faultEvery: k` fails every k-th request (by arrival count);
 * `faultRate: p` fails a request when sha256(faultSeed, body, n) < p, n being how many times the
 * same body arrived before (so a retry of a failed request draws again, and the draws do not
 * depend on the order requests from different callers arrive in). The fault is `faultKind`:
 * 429, 500, 503 or 'reset' (the socket is destroyed). `latencyMs` delays every answer.
 * `maxConcurrent: n` answers 429 at once to a completion request that arrives while n are already
 * in flight (a provider's concurrency limit; counted in `faults` and `overLimit`). `retryAfterSec`
 * puts `Retry-After: <s>` (and `retry-after-ms`) on every 429 and 503 the stub sends; `GET /stats`
 * and `stats()` give `lastAcceptedAt`, when the last request was let through (ms since the epoch).
 * `expectedKey`: requests without `Authorization: Bearer <key>` get a 401.
 * `answerBytes: n`: every answer's content is padded with `x` to an HTTP body of about n bytes,
 * written in 64 KiB chunks as the client reads them (a model that will not stop); `bytesWritten`
 * counts what the sockets took of those bodies, so a test can see a client stop reading early.
 * `received()` lists every request's headers (but Authorization) and body, in arrival order.
 * `model`: the model every answer names (as a server that serves one model does, whatever the
 * request asked for) and the one GET /v1/models lists; unset, an answer names the requested model
 * and the list is `stub`. `systemFingerprint` (default `fp_stub`) is each answer's system_fingerprint.
 * GET /v1/models → that one-model list (key-checked, never faulted, counted apart in `modelLists`).
 * `hold`: every answer waits for `release()` (or its client hanging up), so a test can count the calls in flight at once.
 * GET /stats → { requests, completions, faults, unauthorized, maxInFlight, inFlight, bytesWritten, modelLists, overLimit, lastAcceptedAt }; POST /reset zeroes them;
 * POST /options replaces the options given in its JSON body.
 */
import { scriptFor } from './stub-scripts.js';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type StubFaultKind = 429 | 500 | 503 | 'reset';

export interface OpenAIStubOptions {
  /** Delay before every answer, in ms. @default 0 */
  latencyMs?: number;
  /** Fail every k-th request (1-based arrival count). @default never */
  faultEvery?: number;
  /** Fail this fraction of requests, drawn from a hash of the body and its repeat count. @default 0 */
  faultRate?: number;
  /** @default 0 */
  faultSeed?: number;
  /** @default 429 */
  faultKind?: StubFaultKind;
  /** Answer 429 at once to a completion request arriving while this many are in flight. @default no limit */
  maxConcurrent?: number;
  /** Send `Retry-After` (seconds) and `retry-after-ms` with every 429 and 503. @default none */
  retryAfterSec?: number;
  /** When set, the Authorization header must be `Bearer <expectedKey>`. */
  expectedKey?: string;
  /** The letter answered to multiple-choice questions. @default 'A' */
  choiceLetter?: string;
  /** Answer tool calls without their `id`, as some OpenAI-compatible servers do. @default false */
  omitToolCallIds?: boolean;
  /** Answer GET /v1/models with a 404, as some OpenAI-compatible servers do. @default false */
  noModelList?: boolean;
  /** Pad every answer's content to an HTTP body of about this many bytes, written as the client reads. @default no padding */
  answerBytes?: number;
  /** The model every answer names and GET /v1/models lists. @default the requested model (the list: `stub`) */
  model?: string;
  /** @default 'fp_stub' */
  systemFingerprint?: string;
  /** Hold every answer (after `latencyMs`) until `release()` or until its client hangs up. @default false */
  hold?: boolean;
}

export interface StubStats {
  requests: number;
  completions: number;
  faults: number;
  unauthorized: number;
  /** Most completion requests in flight at once. */
  maxInFlight: number;
  /** Completion requests in flight now. */
  inFlight: number;
  /** Bytes of padded (`answerBytes`) bodies the sockets accepted. */
  bytesWritten: number;
  /** GET /v1/models requests (a run's preflight); `requests` counts chat completions only. */
  modelLists: number;
  /** Requests refused because `maxConcurrent` were in flight. */
  overLimit: number;
  /** When a request was last let through the over-limit check (ms since the epoch); 0 before the first. */
  lastAcceptedAt: number;
}

export interface OpenAIStub {
  /** Base URL to hand to the client, ending in `/v1`. */
  baseURL: string;
  port: number;
  stats(): StubStats;
  reset(): void;
  setOptions(options: OpenAIStubOptions): void;
  /** Answers every held request and holds no more (`hold`). */
  release(): void;
  /** Every completion request so far: its headers but Authorization (JSON) and its body, as received. */
  received(): string[];
  close(): Promise<void>;
}

interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: string;
}

interface WireTool {
  type?: string;
  function?: { name?: string; parameters?: { properties?: Record<string, unknown> } };
}

const ARITHMETIC = /(-?\d+(?:\.\d+)?)\s*([+\-*x×/])\s*(-?\d+(?:\.\d+)?)/;

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((p) => (typeof p === 'object' && p !== null && 'text' in p ? String((p as { text: unknown }).text) : '')).join('')
      : '';

const tokens = (chars: number): number => Math.max(1, Math.ceil(chars / 4));

/** `a op b` of the first arithmetic expression in `text`, or undefined. */
export function solveArithmetic(text: string): { expression: string; value: number } | undefined {
  const m = ARITHMETIC.exec(text);
  if (!m) return undefined;
  const a = Number(m[1]);
  const b = Number(m[3]);
  const op = m[2]!;
  const value = op === '+' ? a + b : op === '-' ? a - b : op === '/' ? a / b : a * b;
  return { expression: `${m[1]} ${op} ${m[3]}`, value };
}

/** The built-in `arith` templates: a pattern and how the stub computes the answer from its numbers. */
const WORD_PROBLEMS: Array<{ pattern: RegExp; expression: (n: number[]) => string; value: (n: number[]) => number }> = [
  { pattern: /has (\d+) \w+ and is given (\d+) more/, expression: ([a, b]) => `${a} + ${b}`, value: ([a, b]) => a! + b! },
  { pattern: /had (\d+) \w+ and gave away (\d+)/, expression: ([a, b]) => `${a} - ${b}`, value: ([a, b]) => a! - b! },
  { pattern: /There are (\d+) boxes with (\d+) \w+ in each box/, expression: ([a, b]) => `${a} * ${b}`, value: ([a, b]) => a! * b! },
  { pattern: /shares (\d+) \w+ equally among (\d+) friends/, expression: ([a, b]) => `${a} / ${b}`, value: ([a, b]) => a! / b! },
  // Wrong on purpose (rule 6): the loss is forgotten.
  {
    pattern: /buys (\d+) packs of \w+ with (\d+) in each pack, then loses (\d+)/,
    expression: ([a, b]) => `${a} * ${b}`,
    value: ([a, b]) => a! * b!,
  },
];

/** The stub's reading of a built-in arithmetic word problem (rule 6), or undefined. */
export function solveWordProblem(text: string): { expression: string; value: number } | undefined {
  for (const w of WORD_PROBLEMS) {
    const m = w.pattern.exec(text);
    if (!m) continue;
    const n = m.slice(1).map(Number);
    return { expression: w.expression(n), value: w.value(n) };
  }
  return undefined;
}

/** Rule 7's word list: substrings that make a review read positive or negative. */
export const SENTIMENT_WORDS = {
  positive: ['delicious', 'outstanding', 'perfectly', 'worth', 'exceeded', 'brilliant', 'joy', 'lovely', 'wonderful', 'better'],
  negative: [
    'bland',
    'disappointment',
    'ruined',
    'broke',
    'waste',
    'stopped',
    'boring',
    'no sense',
    'worst',
    'dirty',
    'delayed',
    'rude',
    'tears',
  ],
};

/** The stub's sentiment label for a review (rule 7). */
export function sentimentOf(text: string): 'positive' | 'negative' | 'neutral' {
  const t = text.toLowerCase();
  if (SENTIMENT_WORDS.positive.some((w) => t.includes(w))) return 'positive';
  if (SENTIMENT_WORDS.negative.some((w) => t.includes(w))) return 'negative';
  return 'neutral';
}

const INVERSE: Record<string, string> = { '+': '-', '-': '+', '*': '/', '/': '*' };

/** `<result> <inverse op> <b>` for an expression `<a> <op> <b>`: what the stub computes to check a tool's result. */
function inverseCheck(expression: string, result: string): string | undefined {
  const m = /^(-?\d+(?:\.\d+)?) ([+\-*/]) (-?\d+(?:\.\d+)?)$/.exec(expression);
  if (!m || !/^-?\d+(?:\.\d+)?$/.test(result)) return undefined;
  return `${result} ${INVERSE[m[2]!]} ${m[3]}`;
}

const SENTIMENT_TASK = /sentiment/i;
const LABELS_LISTED = /positive.*negative.*neutral/is;

const hashUnit = (...parts: Array<string | number>): number =>
  createHash('sha256').update(parts.join('\u0000')).digest().readUInt32BE(0) / 2 ** 32;

/** The deterministic answer to one request body (rules 1–8 of the module comment). */
export function stubAnswer(
  body: { messages?: WireMessage[]; tools?: WireTool[] },
  choiceLetter = 'A',
): { content: string | null; toolCall?: { name: string; arguments: string } } {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages[messages.length - 1];
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const userText = textOf(lastUser?.content);
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const toolMessages = messages.filter((m) => m.role === 'tool');
  const script = tools.length > 0 ? scriptFor(textOf(messages.find((m) => m.role === 'user')?.content)) : undefined;
  if (script) {
    const next = script.calls[toolMessages.length];
    if (next) return { content: null, toolCall: { name: next.name, arguments: JSON.stringify(next.arguments) } };
    return { content: script.answer ?? textOf(last?.content).trim() };
  }
  const word = solveWordProblem(userText);
  if (tools.length > 0 && word && last?.role === 'tool') {
    // Rule 2 for word problems: check the first result with the inverse operation, then answer it.
    const first = textOf(toolMessages[0]?.content).trim();
    if (toolMessages.length >= 2) return { content: first };
    const check = inverseCheck(word.expression, first);
    if (check) {
      return { content: null, toolCall: { name: tools[0]?.function?.name ?? 'tool', arguments: JSON.stringify({ expression: check }) } };
    }
  }
  if (tools.length > 0 && toolMessages.length === 0) {
    const solved = solveArithmetic(userText) ?? word;
    const name = tools[0]?.function?.name ?? 'tool';
    if (tools[0]?.function?.parameters?.properties?.code !== undefined) {
      return { content: null, toolCall: { name, arguments: JSON.stringify({ code: userText }) } };
    }
    if (tools[0]?.function?.parameters?.properties?.command !== undefined) {
      return { content: null, toolCall: { name, arguments: JSON.stringify({ command: userText }) } };
    }
    return {
      content: null,
      toolCall: { name, arguments: JSON.stringify(solved ? { expression: solved.expression } : { input: userText }) },
    };
  }
  if (last?.role === 'tool') return { content: textOf(last.content) };
  const submitted = /^Submitted answer:\s*(.*)$/m.exec(userText);
  const expected = /^Expected answer:\s*(.*)$/m.exec(userText);
  if (submitted && expected) {
    const same = submitted[1]!.trim().toLowerCase() === expected[1]!.trim().toLowerCase();
    return { content: same ? 'The submission matches the expected answer.\nGRADE: C' : 'The submission differs.\nGRADE: I' };
  }
  if (/^\s*A[.)]\s/m.test(userText) && /^\s*B[.)]\s/m.test(userText)) return { content: choiceLetter };
  const solved = solveArithmetic(userText) ?? solveWordProblem(userText);
  if (solved) return { content: String(solved.value) };
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => textOf(m.content))
    .join('\n');
  if (SENTIMENT_TASK.test(system) && LABELS_LISTED.test(system)) return { content: sentimentOf(userText) };
  return { content: `echo: ${userText}` };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const PAD_CHUNK = 64 * 1024;

/**
 * `body` as JSON with its first choice's content padded with `x` to about `bytes` bytes, written
 * chunk by chunk, each after the socket drained the previous one; stops when the client goes away.
 */
async function sendPadded(res: ServerResponse, body: Record<string, unknown>, bytes: number, written: (n: number) => void): Promise<void> {
  const MARK = '\u0000pad\u0000';
  const choices = body.choices as Array<{ message: { content: string | null } }>;
  choices[0]!.message.content = `${choices[0]!.message.content ?? ''}${MARK}`;
  const [head, tail] = JSON.stringify(body).split(JSON.stringify(MARK).slice(1, -1)) as [string, string];
  let left = Math.max(0, bytes - head.length - tail.length);
  res.writeHead(200, { 'content-type': 'application/json' });
  const write = (chunk: string): Promise<boolean> =>
    new Promise((resolve) => {
      if (res.destroyed) return resolve(false);
      written(Buffer.byteLength(chunk));
      if (res.write(chunk)) return resolve(true);
      const done = (ok: boolean) => () => {
        res.off('drain', onDrain);
        res.off('close', onClose);
        resolve(ok);
      };
      const onDrain = done(true);
      const onClose = done(false);
      res.once('drain', onDrain);
      res.once('close', onClose);
    });
  if (!(await write(head))) return;
  while (left > 0) {
    const n = Math.min(PAD_CHUNK, left);
    left -= n;
    if (!(await write('x'.repeat(n)))) return;
  }
  res.end(tail);
}

const errorBody = (message: string, type: string, code: string | null) => ({ error: { message, type, param: null, code } });

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startOpenAIStub(initial: OpenAIStubOptions = {}, port = 0): Promise<OpenAIStub> {
  let options: OpenAIStubOptions = { ...initial };
  const zero = (): StubStats => ({
    requests: 0,
    completions: 0,
    faults: 0,
    unauthorized: 0,
    maxInFlight: 0,
    inFlight: 0,
    bytesWritten: 0,
    modelLists: 0,
    overLimit: 0,
    lastAcceptedAt: 0,
  });
  const stats: StubStats = zero();
  const retryAfter = (): Record<string, string> =>
    options.retryAfterSec === undefined
      ? {}
      : { 'retry-after': String(options.retryAfterSec), 'retry-after-ms': String(Math.round(options.retryAfterSec * 1000)) };
  let inFlight = 0;
  const held = new Set<() => void>();
  const seen = new Map<string, number>();
  let nextId = 0;
  const received: string[] = [];

  const complete = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    const { authorization: _, ...headers } = req.headers;
    received.push(`${JSON.stringify(headers)}\n${raw}`);
    const n = ++stats.requests;
    if (options.expectedKey !== undefined && req.headers.authorization !== `Bearer ${options.expectedKey}`) {
      stats.unauthorized++;
      sendJson(res, 401, errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
      return;
    }
    let body: { model?: string; messages?: WireMessage[]; tools?: WireTool[] };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      sendJson(res, 400, errorBody('We could not parse the JSON body of your request.', 'invalid_request_error', null));
      return;
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      sendJson(res, 400, errorBody("'messages' must be a non-empty array", 'invalid_request_error', null));
      return;
    }
    if (options.maxConcurrent !== undefined && inFlight > options.maxConcurrent) {
      stats.faults++;
      stats.overLimit++;
      sendJson(res, 429, errorBody('Rate limit reached: too many requests in flight', 'requests', 'rate_limit_exceeded'), retryAfter());
      return;
    }
    stats.lastAcceptedAt = Date.now();
    const repeat = seen.get(raw) ?? 0;
    seen.set(raw, repeat + 1);
    const everyHit = options.faultEvery !== undefined && options.faultEvery > 0 && n % options.faultEvery === 0;
    const rateHit = (options.faultRate ?? 0) > 0 && hashUnit(options.faultSeed ?? 0, raw, repeat) < options.faultRate!;
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
    if (options.hold) {
      await new Promise<void>((resolve) => {
        held.add(resolve);
        res.once('close', resolve);
      });
      if (res.destroyed) return;
    }
    if (everyHit || rateHit) {
      stats.faults++;
      const kind = options.faultKind ?? 429;
      if (kind === 'reset') {
        req.socket.destroy();
        return;
      }
      if (kind === 429) sendJson(res, 429, errorBody('Rate limit reached for requests', 'requests', 'rate_limit_exceeded'), retryAfter());
      else if (kind === 503)
        sendJson(res, 503, errorBody('The engine is currently overloaded, please try again later.', 'server_error', null), retryAfter());
      else sendJson(res, 500, errorBody('The server had an error while processing your request.', 'server_error', null));
      return;
    }
    const answer = stubAnswer(body, options.choiceLetter);
    const promptChars = body.messages.reduce((s, m) => s + textOf(m.content).length, 0);
    const completionChars = answer.toolCall ? answer.toolCall.arguments.length : (answer.content ?? '').length;
    const id = ++nextId;
    // The tool call's id comes from the request alone (not the arrival count): it enters the next request's
    // body, whose fault draw and cache key must not depend on the order in which callers arrived.
    const callId = `call_${createHash('sha256').update(raw).digest('hex').slice(0, 16)}`;
    const message: Record<string, unknown> = { role: 'assistant', content: answer.content, refusal: null };
    if (answer.toolCall) {
      message.tool_calls = [{ ...(options.omitToolCallIds ? {} : { id: callId }), type: 'function', function: answer.toolCall }];
    }
    const usage = { prompt_tokens: tokens(promptChars), completion_tokens: tokens(completionChars) };
    stats.completions++;
    const completion = {
      id: `chatcmpl-stub-${id}`,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: options.model ?? body.model ?? 'stub',
      choices: [{ index: 0, message, logprobs: null, finish_reason: answer.toolCall ? 'tool_calls' : 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      system_fingerprint: options.systemFingerprint ?? 'fp_stub',
    };
    if (options.answerBytes !== undefined) {
      await sendPadded(res, completion, options.answerBytes, (n) => {
        stats.bytesWritten += n;
      });
      return;
    }
    sendJson(res, 200, completion);
  };

  // The models list a client (or a run's preflight) asks for; key-checked, never faulted, and not in `requests`.
  const listModels = (req: IncomingMessage, res: ServerResponse): void => {
    req.resume();
    stats.modelLists++;
    if (options.expectedKey !== undefined && req.headers.authorization !== `Bearer ${options.expectedKey}`) {
      stats.unauthorized++;
      sendJson(res, 401, errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
      return;
    }
    sendJson(res, 200, {
      object: 'list',
      data: [{ id: options.model ?? 'stub', object: 'model', created: 1_700_000_000, owned_by: 'stub' }],
    });
  };

  const server: Server = createServer((req, res) => {
    const route = `${req.method} ${(req.url ?? '').split('?')[0]}`;
    const handle = async (): Promise<void> => {
      switch (route) {
        case 'POST /v1/chat/completions':
          inFlight++;
          stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
          return complete(req, res).finally(() => {
            inFlight--;
          });
        case 'GET /v1/models':
          if (options.noModelList) break;
          return listModels(req, res);
        case 'GET /stats':
          return sendJson(res, 200, { ...stats, inFlight });
        case 'POST /reset':
          Object.assign(stats, zero());
          seen.clear();
          return sendJson(res, 200, stats);
        case 'POST /options':
          options = JSON.parse((await readBody(req)) || '{}') as OpenAIStubOptions;
          return sendJson(res, 200, options);
      }
      sendJson(res, 404, errorBody(`Unknown request URL: ${route}`, 'invalid_request_error', 'unknown_url'));
    };
    handle().catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody(String(err), 'server_error', null));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const actual = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    baseURL: `http://127.0.0.1:${actual}/v1`,
    port: actual,
    stats: () => ({ ...stats, inFlight }),
    reset: () => {
      Object.assign(stats, zero());
      seen.clear();
    },
    setOptions: (o) => {
      options = { ...o };
    },
    release: () => {
      options = { ...options, hold: false };
      for (const resolve of held) resolve();
      held.clear();
    },
    received: () => [...received],
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
