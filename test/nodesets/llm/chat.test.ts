/** llm__chat and llm__judge called as a host calls them, with the real openai client against the stand-in server. */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CallContext, NodeOutputs } from '../../../src/core/types.js';
import { redact } from '../../../src/nodesets/llm/api-key.js';
import { chat, evictChat, liveChatEpisodes } from '../../../src/nodesets/llm/chat.js';
import { judge, parseGrade } from '../../../src/nodesets/llm/judge.js';
import { startOpenAIStub, type OpenAIStub } from '../../support/openai-stub.js';

const KEY = 'sk-test-0123456789abcdef';
let stub: OpenAIStub;
let tmp: string;
let n = 0;

const ctx = (episodeKey: string, step = 0): CallContext => ({ runSeed: 1, episodeIndex: 0, seed: 42, step, episodeKey, nodeId: 'llm' });
const ask = (q: string) => [{ role: 'user', content: q }];
/** A fresh episode key per call site, so keyed state never leaks between tests. */
const key = () => `t:${++n}`;

beforeAll(async () => {
  stub = await startOpenAIStub({ expectedKey: KEY });
  tmp = await mkdtemp(join(tmpdir(), 'llm-chat-'));
  process.env.EVAL_LLM_CACHE_DIR = join(tmp, 'cache');
  process.env.TEST_LLM_API_KEY = KEY;
});
afterAll(async () => {
  await stub.close();
  await rm(tmp, { recursive: true, force: true });
});
beforeEach(() => {
  stub.setOptions({ expectedKey: KEY });
  stub.reset();
});

const base = () => ({ base_url: stub.baseURL, model: 'stub-model', api_key_env: 'TEST_LLM_API_KEY', cache: false, retry_base_ms: 1 });

describe('llm__chat', () => {
  it('answers through the endpoint with the key from the named variable; one llm_call event with tokens and latency', async () => {
    const out = await chat({ inputs: { messages: ask('What is 12 + 7?') }, config: base(), ctx: ctx(key()) });
    expect(out.answer).toBe('19');
    expect(out.message).toEqual({ role: 'assistant', content: '19' });
    expect(out.tool_calls).toBeUndefined();
    expect(out.usage).toMatchObject({ llm_calls: 1, prompt_tokens: 4, completion_tokens: 1, llm_retries: 0, llm_cache_hits: 0 });
    const events = out.$events as Array<Record<string, unknown>>;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'llm_call',
      model: 'stub-model',
      messages: ask('What is 12 + 7?'),
      response: { role: 'assistant', content: '19' },
      usage: { prompt_tokens: 4, completion_tokens: 1 },
      cached: false,
      retries: 0,
    });
    expect(typeof events[0]!.latency_ms).toBe('number');
    expect(stub.stats()).toMatchObject({ completions: 1, unauthorized: 0 });
  });

  it('gives a tool call that came without an id one of its own, the same on every replay, so the tools node can answer it', async () => {
    stub.setOptions({ expectedKey: KEY, omitToolCallIds: true });
    const tools = [{ type: 'function', function: { name: 'calc', parameters: { type: 'object' } } }];
    const config = { ...base(), tools };
    const play = () => chat({ inputs: { messages: ask('What is 6 x 7?') }, config, ctx: ctx(key()) });
    const first = await play();
    expect(first.tool_calls).toEqual([
      { id: 'call_1_0', type: 'function', function: { name: 'calc', arguments: '{"expression":"6 x 7"}' } },
    ]);
    expect(first.message).toMatchObject({ tool_calls: first.tool_calls });
    expect((await play()).tool_calls).toEqual(first.tool_calls);
  });

  it('keeps the conversation per episode: tool calls, then tool results appended, then the final answer; evict drops it', async () => {
    const k = key();
    const tools = [{ type: 'function', function: { name: 'calc', parameters: { type: 'object' } } }];
    const config = { ...base(), tools, system_prompt: 'Use the tool.' };
    const first = await chat({ inputs: { messages: ask('What is 6 x 7?') }, config, ctx: ctx(k) });
    expect(first.answer).toBeUndefined();
    const calls = first.tool_calls as Array<{ id: string; function: { name: string; arguments: string } }>;
    expect(calls[0]!.function).toEqual({ name: 'calc', arguments: '{"expression":"6 x 7"}' });
    const second = await chat({
      inputs: { messages: ask('What is 6 x 7?'), tool_results: [{ role: 'tool', tool_call_id: calls[0]!.id, content: '42' }] },
      config,
      ctx: ctx(k, 1),
    });
    expect(second.answer).toBe('42');
    expect(second.usage).toMatchObject({ llm_calls: 2 });
    const event = (second.$events as Array<Record<string, unknown>>)[0]!;
    // The second call's event carries only what is new since the first, plus a hash of the rest.
    expect(event.messages).toEqual([{ role: 'tool', tool_call_id: calls[0]!.id, content: '42' }]);
    expect(event.prior_messages).toBe(3);
    expect(event.prior_sha256).toMatch(/^[0-9a-f]{64}$/);
    // Fired again with nothing new: the same answer, no call.
    const again = await chat({ inputs: { messages: ask('What is 6 x 7?') }, config, ctx: ctx(k, 2) });
    expect(again).toMatchObject({ answer: '42', usage: { llm_calls: 2 } });
    expect(stub.stats().completions).toBe(2);
    const live = liveChatEpisodes();
    evictChat(k);
    expect(liveChatEpisodes()).toBe(live - 1);
  });

  it('max_llm_calls reached: $ending budget_exhausted with the usage so far, no call made', async () => {
    const k = key();
    const tools = [{ type: 'function', function: { name: 'calc' } }];
    const config = { ...base(), tools, max_llm_calls: 1 };
    const first = await chat({ inputs: { messages: ask('What is 1 + 1?') }, config, ctx: ctx(k) });
    const id = (first.tool_calls as Array<{ id: string }>)[0]!.id;
    const second = await chat({
      inputs: { messages: ask('What is 1 + 1?'), tool_results: [{ role: 'tool', tool_call_id: id, content: '2' }] },
      config,
      ctx: ctx(k, 1),
    });
    expect(second.$ending).toEqual({ kind: 'budget_exhausted', message: 'the call budget of 1 model call(s) is spent' });
    expect(second.usage).toMatchObject({ llm_calls: 1 });
    expect(second.answer).toBeUndefined();
    expect(stub.stats().completions).toBe(1);
  });

  it('max_episode_tokens reached: the next call is not made and the episode ends budget_exhausted, naming the tokens spent', async () => {
    const k = key();
    const tools = [{ type: 'function', function: { name: 'calc' } }];
    const first = await chat({ inputs: { messages: ask('What is 1 + 1?') }, config: { ...base(), tools }, ctx: ctx(k) });
    const { prompt_tokens, completion_tokens } = first.usage as { prompt_tokens: number; completion_tokens: number };
    const spent = prompt_tokens + completion_tokens;
    const id = (first.tool_calls as Array<{ id: string }>)[0]!.id;
    const again = (limit: number, step: number) =>
      chat({
        inputs: { messages: ask('What is 1 + 1?'), tool_results: [{ role: 'tool', tool_call_id: id, content: '2' }] },
        config: { ...base(), tools, max_episode_tokens: limit },
        ctx: ctx(k, step),
      });
    const second = await again(spent, 1);
    expect(second.$ending).toEqual({
      kind: 'budget_exhausted',
      message: `the token budget of ${spent} is spent (${spent} tokens in 1 call(s))`,
    });
    expect(second.$events).toEqual([{ type: 'budget_exhausted', llm_calls: 1, tokens: spent, max_episode_tokens: spent }]);
    expect(stub.stats().completions).toBe(1);
    // Below the limit the call goes ahead, though it may carry the episode past it.
    const third = await again(spent + 1, 2);
    expect(third.answer).toBe('2');
    expect(stub.stats().completions).toBe(2);
  });

  it.each([
    [429, 'every 2nd'],
    [500, 'every 2nd'],
    ['reset', 'every 2nd'],
  ] as const)('retries %s (%s request) with backoff, each retry an infra event, counted in usage', async (faultKind, _every) => {
    stub.setOptions({ expectedKey: KEY, faultEvery: 2, faultKind });
    const outs: NodeOutputs[] = [];
    for (let i = 0; i < 3; i++) outs.push(await chat({ inputs: { messages: ask(`What is ${i} + 1?`) }, config: base(), ctx: ctx(key()) }));
    expect(outs.map((o) => o.answer)).toEqual(['1', '2', '3']);
    const retries = outs.reduce((s, o) => s + (o.usage as { llm_retries: number }).llm_retries, 0);
    expect(retries).toBe(stub.stats().faults);
    expect(retries).toBeGreaterThan(0);
    const retryEvents = outs.flatMap((o) => (o.$events as Array<Record<string, unknown>>).filter((e) => e.type === 'infra'));
    expect(retryEvents).toHaveLength(retries);
    expect(retryEvents[0]).toMatchObject({ kind: 'retry', attempt: 1, status: faultKind === 'reset' ? null : faultKind });
  });

  it('a dead endpoint: retried, then $ending infra_error naming the endpoint, never the key', async () => {
    const port = await closedPort();
    const out = await chat({
      inputs: { messages: ask('What is 2 + 2?') },
      config: { ...base(), base_url: `http://127.0.0.1:${port}/v1`, max_retries: 2 },
      ctx: ctx(key()),
    });
    const ending = out.$ending as { kind: string; message: string };
    expect(ending.kind).toBe('infra_error');
    expect(ending.message).toMatch(new RegExp(`127\\.0\\.0\\.1:${port}/v1 failed after 3 attempt\\(s\\)`));
    expect(out.usage).toMatchObject({ llm_calls: 0, llm_retries: 2 });
    expect(JSON.stringify(out)).not.toContain(KEY);
  });

  it('a refused request (wrong key: 401) is a node error, not retried', async () => {
    process.env.TEST_LLM_WRONG_API_KEY = 'sk-wrong-key-000000';
    await expect(
      chat({ inputs: { messages: ask('hi') }, config: { ...base(), api_key_env: 'TEST_LLM_WRONG_API_KEY' }, ctx: ctx(key()) }),
    ).rejects.toThrow(/refused the request \(HTTP 401\)/);
    expect(stub.stats()).toMatchObject({ requests: 1, unauthorized: 1 });
  });

  it('a missing key variable is one clear error naming the variable', async () => {
    await expect(
      chat({ inputs: { messages: ask('hi') }, config: { ...base(), api_key_env: 'TEST_LLM_UNSET_API_KEY' }, ctx: ctx(key()) }),
    ).rejects.toThrow(/the API key variable TEST_LLM_UNSET_API_KEY is not set/);
    expect(stub.stats().requests).toBe(0);
  });

  it('cache "auto" at temperature 0: the second identical call is answered from disk (0 endpoint calls), counted as a hit', async () => {
    const config = { ...base(), cache: 'auto', temperature: 0, seed: 5 };
    const first = await chat({ inputs: { messages: ask('What is 30 + 3?') }, config, ctx: ctx(key()) });
    stub.reset();
    const second = await chat({ inputs: { messages: ask('What is 30 + 3?') }, config, ctx: ctx(key()) });
    expect(stub.stats().requests).toBe(0);
    expect(second.answer).toBe(first.answer);
    expect(second.usage).toMatchObject({ llm_calls: 1, llm_cache_hits: 1, prompt_tokens: 4 });
    expect((second.$events as Array<Record<string, unknown>>)[0]).toMatchObject({ cached: true });
    // Any parameter changes the key; the cache files hold no key.
    await chat({ inputs: { messages: ask('What is 30 + 3?') }, config: { ...config, max_tokens: 9 }, ctx: ctx(key()) });
    expect(stub.stats().requests).toBe(1);
    const files = await cacheFiles(join(tmp, 'cache'));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const f of files) expect(await readFile(f, 'utf8')).not.toContain(KEY);
    // temperature > 0 with "auto": not cached.
    stub.reset();
    const warm = { ...config, temperature: 0.7 };
    await chat({ inputs: { messages: ask('What is 30 + 3?') }, config: warm, ctx: ctx(key()) });
    await chat({ inputs: { messages: ask('What is 30 + 3?') }, config: warm, ctx: ctx(key()) });
    expect(stub.stats().requests).toBe(2);
  });

  it('max_concurrency bounds the calls in flight to one base URL across callers', async () => {
    stub.setOptions({ expectedKey: KEY, latencyMs: 30 });
    const config = { ...base(), max_concurrency: 2 };
    await Promise.all(
      Array.from({ length: 6 }, (_, i) => chat({ inputs: { messages: ask(`What is ${i} + 2?`) }, config, ctx: ctx(key()) })),
    );
    expect(stub.stats()).toMatchObject({ completions: 6, maxInFlight: 2 });
  });

  it('redact scrubs every occurrence of the key', () => {
    expect(redact(`a ${KEY} b ${KEY}`, KEY)).toBe('a [redacted] b [redacted]');
  });

  it('an event keeps record_max_chars of each message, with a marker saying how much was cut; the outputs keep it all', async () => {
    stub.setOptions({ expectedKey: KEY, answerBytes: 300_000 });
    const question = `What is 2 + 2? ${'please '.repeat(1000)}`;
    const out = await chat({ inputs: { messages: ask(question) }, config: { ...base(), record_max_chars: 1000 }, ctx: ctx(key()) });
    const answer = out.answer as string;
    expect(answer.length).toBeGreaterThan(290_000);
    expect(answer.startsWith('4')).toBe(true);
    const event = (out.$events as Array<{ messages: Array<{ content: string }>; response: { content: string } }>)[0]!;
    expect(event.response.content).toBe(`${answer.slice(0, 1000)}[… ${answer.length - 1000} more characters not recorded]`);
    expect(event.messages[0]!.content).toBe(`${question.slice(0, 1000)}[… ${question.length - 1000} more characters not recorded]`);
    expect(JSON.stringify(event).length).toBeLessThan(4000);
  });
});

describe('llm__judge', () => {
  it('grades with a rubric: score object, metrics, its own llm_call event', async () => {
    const config = { ...base(), rubric: 'Same number.' };
    const good = await judge({ inputs: { answer: '19', target: '19', messages: ask('What is 12 + 7?') }, config, ctx: ctx(key()) });
    expect(good.score).toMatchObject({ scorer: 'model_graded', value: 1, answer: '19', extracted: 'C', target: '19' });
    expect(good.metrics).toEqual({ score: 1, correct: true });
    expect((good.$events as Array<Record<string, unknown>>)[0]).toMatchObject({ type: 'llm_call', role: 'judge' });
    const bad = await judge({ inputs: { answer: '18', target: '19' }, config, ctx: ctx(key()) });
    expect(bad.score).toMatchObject({ value: 0, extracted: 'I' });
    expect(bad.metrics).toEqual({ score: 0, correct: false });
  });

  it('its budget is its own: past max_llm_calls it ends the episode', async () => {
    const k = key();
    const config = { ...base(), max_llm_calls: 1 };
    await judge({ inputs: { answer: '1', target: '1' }, config, ctx: ctx(k) });
    const out = await judge({ inputs: { answer: '1', target: '1' }, config, ctx: ctx(k, 1) });
    expect(out.$ending).toMatchObject({ kind: 'budget_exhausted' });
  });

  it('parseGrade takes the last GRADE line', () => {
    expect(parseGrade('GRADE: I\n…on reflection\nGRADE: C')).toBe('C');
    expect(parseGrade('no grade')).toBeUndefined();
  });
});

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function cacheFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const sub of await readdir(dir)) for (const f of await readdir(join(dir, sub))) out.push(join(dir, sub, f));
  return out;
}
