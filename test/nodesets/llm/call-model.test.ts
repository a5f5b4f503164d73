/** What callModel keeps of an endpoint's answer when the answer itself is odd: it echoes the key, or its usage is not counts. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callModel, EndpointAnswerError } from '../../../src/nodesets/llm/call-model.js';
import { ResponseTooLargeError } from '../../../src/nodesets/llm/http-fetch.js';
import { readLlmConfig } from '../../../src/nodesets/llm/llm-config.js';
import { startOpenAIStub } from '../../support/openai-stub.js';

const KEY = 'sk-call-model-test-0123456789';
/** The answer the endpoint gives, built from the request's Authorization header. */
let answer: (authorization: string) => unknown = () => ({});
/** When set, every request waits for it before it is answered; `arrived` hears of each request as it comes. */
let hold: Promise<void> | undefined;
let arrived: () => void = () => {};
let requests = 0;
let server: Server;
let baseURL: string;
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'llm-call-model-'));
  process.env.EVAL_LLM_CACHE_DIR = join(tmp, 'cache');
  process.env.CALL_MODEL_TEST_API_KEY = KEY;
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', async () => {
      requests++;
      arrived();
      if (hold) await hold;
      res.writeHead(200, { 'content-type': 'application/json' });
      const a = answer(req.headers.authorization ?? '');
      res.end(typeof a === 'string' ? a : JSON.stringify(a));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await rm(tmp, { recursive: true, force: true });
});

const completion = (message: Record<string, unknown>, usage: unknown) => ({
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
  usage,
});

const config = (cache: boolean) =>
  readLlmConfig({ base_url: baseURL, model: 'm', api_key_env: 'CALL_MODEL_TEST_API_KEY', cache, retry_base_ms: 1 });

async function cacheFiles(): Promise<string[]> {
  const dir = join(tmp, 'cache');
  const subs = await readdir(dir).catch(() => [] as string[]);
  const texts: string[] = [];
  for (const s of subs) for (const f of await readdir(join(dir, s))) texts.push(await readFile(join(dir, s, f), 'utf8'));
  return texts;
}

describe('callModel', () => {
  it('scrubs the key from an answer that echoes it (content and tool call arguments), in the result and the cache', async () => {
    answer = (auth) =>
      completion(
        {
          content: `you sent ${auth}`,
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'calc', arguments: JSON.stringify({ expression: auth }) } }],
        },
        { prompt_tokens: 3, completion_tokens: 2 },
      );
    const r = await callModel({ config: config(true), messages: [{ role: 'user', content: 'hi' }], seed: 1, callNumber: 0 });
    const text = JSON.stringify(r.response);
    expect(text).not.toContain(KEY);
    expect(r.response.message.content).toBe('you sent Bearer [redacted]');
    expect(text).toContain('[redacted]');
    const files = await cacheFiles();
    expect(files).toHaveLength(1);
    expect(files[0]).not.toContain(KEY);
  });

  it.each([
    ['negative and non-numeric', { prompt_tokens: -3, completion_tokens: 'x' }],
    ['null', { prompt_tokens: null, completion_tokens: null }],
    ['missing', undefined],
  ])('reads %s token counts as 0, never a string or a negative metric', async (_what, usage) => {
    answer = () => completion({ content: '5' }, usage);
    const r = await callModel({ config: config(false), messages: [{ role: 'user', content: 'hi' }], seed: 1, callNumber: 0 });
    expect(r.response.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0 });
    expect(r.response.message.content).toBe('5');
  });

  it('an identical request made while one is in flight waits for it: one endpoint call, the second a cache hit', async () => {
    answer = () => completion({ content: '42' }, { prompt_tokens: 3, completion_tokens: 1 });
    let release!: () => void;
    hold = new Promise<void>((r) => {
      release = r;
    });
    const first = new Promise<void>((r) => {
      arrived = r;
    });
    requests = 0;
    const messages = [{ role: 'user', content: 'What is 6 x 7?' }];
    try {
      const a = callModel({ config: config(true), messages, seed: 1, callNumber: 0 });
      await first; // the first request is at the endpoint, unanswered
      const b = callModel({ config: config(true), messages, seed: 2, callNumber: 0 });
      release();
      const [ra, rb] = await Promise.all([a, b]);
      expect(requests).toBe(1);
      expect(ra.cached).toBe(false);
      expect(rb.cached).toBe(true);
      expect(rb.response).toEqual(ra.response);
    } finally {
      hold = undefined;
      arrived = () => {};
    }
  });

  it('a request waiting for an identical one stops waiting when its own signal aborts', async () => {
    answer = () => completion({ content: '7' }, { prompt_tokens: 3, completion_tokens: 1 });
    let release!: () => void;
    hold = new Promise<void>((r) => {
      release = r;
    });
    const first = new Promise<void>((r) => {
      arrived = r;
    });
    const messages = [{ role: 'user', content: 'What is 3 + 4?' }];
    try {
      const a = callModel({ config: config(true), messages, seed: 1, callNumber: 0 });
      await first;
      const ac = new AbortController();
      const b = callModel({ config: config(true), messages, seed: 2, callNumber: 0, signal: ac.signal });
      ac.abort(new Error('episode cancelled'));
      await expect(b).rejects.toThrow('episode cancelled');
      release();
      expect((await a).response.message.content).toBe('7');
    } finally {
      hold = undefined;
      arrived = () => {};
    }
  });

  it.each([
    ['a 200 whose JSON body does not parse', '{"id": not json', /answered with something that is not a chat completion: .*JSON/],
    ['a completion without a choice', JSON.stringify({ id: 'c', object: 'chat.completion', choices: [] }), /no choice in it/],
  ])('%s is a node error saying what came back, not a refusal and not retried', async (_what, body, message) => {
    answer = () => body;
    requests = 0;
    const p = callModel({ config: config(false), messages: [{ role: 'user', content: 'hi' }], seed: 1, callNumber: 0 });
    await expect(p).rejects.toBeInstanceOf(EndpointAnswerError);
    await expect(p).rejects.toMatchObject({ code: 'NODE_ERROR', message: expect.stringMatching(message) });
    await expect(p).rejects.not.toThrow(/refused/);
    expect(requests).toBe(1);
  });

  it('a 20 MB answer fails the call with LLM_RESPONSE_TOO_LARGE naming the URL and the limit: read no further, not retried, memory stays small', async () => {
    const stub = await startOpenAIStub({ answerBytes: 20_000_000 });
    try {
      const peakKb = async () => Number(/VmHWM:\s+(\d+)/.exec(await readFile('/proc/self/status', 'utf8'))?.[1]);
      const before = await peakKb();
      const c = readLlmConfig({ base_url: stub.baseURL, model: 'm', api_key_env: '', cache: true, retry_base_ms: 1 });
      const err = await callModel({ config: c, messages: [{ role: 'user', content: 'say a lot' }], seed: 1, callNumber: 0 }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ResponseTooLargeError);
      expect((err as Error).message).toBe(
        `${stub.baseURL}/chat/completions answered with more than 1048576 bytes (max_response_bytes); the answer was abandoned`,
      );
      expect(stub.stats().requests).toBe(1);
      const grewKb = (await peakKb()) - before;
      const sent = stub.stats().bytesWritten;
      console.log(
        `20 MB answer: the stub's sockets took ${(sent / 1e6).toFixed(1)} MB before the client closed; peak RSS grew ${grewKb} KB`,
      );
      // Buffering the 20 MB (and parsing them) would raise the peak by 40 MB or more.
      expect(grewKb).toBeLessThan(16 * 1024);
      // Nothing of it was cached.
      expect(await cacheFiles()).not.toContainEqual(expect.stringContaining('say a lot'));
    } finally {
      await stub.close();
    }
  });
});
