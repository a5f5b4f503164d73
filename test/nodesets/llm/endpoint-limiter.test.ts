/** The endpoint limiter: on its own (grant order, levels), then under llm__chat against the stand-in's limits. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallContext, EndpointStats } from '../../../src/core/types.js';
import { chat } from '../../../src/nodesets/llm/chat.js';
import { BACKOFF, EndpointLimiter, endpointLimiterStats, type Permit } from '../../../src/nodesets/llm/endpoint-limiter.js';
import { readLlmConfig } from '../../../src/nodesets/llm/llm-config.js';
import { retryAfterMs } from '../../../src/nodesets/llm/retry-after.js';
import { startOpenAIStub, type OpenAIStub } from '../../support/openai-stub.js';

const adaptive = { fixed: undefined, initial: 4, floor: 1, cap: 64 };

describe('EndpointLimiter', () => {
  it('grants waiting calls round-robin between callers, not in arrival order', async () => {
    const l = new EndpointLimiter('http://x/v1', 'm', { ...adaptive, fixed: 1 });
    const order: string[] = [];
    const held: Array<Promise<void>> = [];
    // Run a queues 6 calls (its first goes at once) before run b queues 3; each call ends soon after it starts.
    for (const [caller, n] of [
      ['a', 6],
      ['b', 3],
    ] as const) {
      for (let i = 0; i < n; i++) {
        held.push(
          l.acquire(caller).then((p) => {
            order.push(caller);
            setImmediate(() => p.release({ kind: 'other' }));
          }),
        );
      }
    }
    await Promise.all(held);
    expect(order.join('')).toBe('aabababaa');
  });

  it('slow start doubles per round trip, a 429 cuts once per round trip, then it grows by one per round trip', async () => {
    const l = new EndpointLimiter('http://x/v1', 'm', adaptive);
    const round = async (outcome: Parameters<Permit['release']>[0]): Promise<void> => {
      const permits = await Promise.all(Array.from({ length: l.level }, () => l.acquire('r')));
      for (const p of permits) p.release(outcome);
    };
    await round({ kind: 'answered', latencyMs: 100 });
    expect(l.level).toBe(8);
    await round({ kind: 'answered', latencyMs: 100 });
    expect(l.level).toBe(16);
    // Sixteen 429s of one round trip: one cut.
    await round({ kind: 'overloaded', status: 429, retryAfterMs: undefined });
    expect(l.level).toBe(Math.floor(16 * BACKOFF));
    const cut = l.level;
    await round({ kind: 'answered', latencyMs: 100 });
    expect(l.level).toBe(cut + 1);
    // Latency that no longer holds (many times the fastest): no raise.
    await round({ kind: 'answered', latencyMs: 5000 });
    expect(l.level).toBe(cut + 1);
    expect(l.stats()).toMatchObject({ mode: 'adaptive', count429: 16, inFlight: 0, waiting: 0, callers: ['r'] });
  });

  it('a fixed level never moves; the floor and cap bound an adaptive one; a run asking for more lifts an uncut level', async () => {
    const fixed = new EndpointLimiter('http://x/v1', 'm', { ...adaptive, fixed: 3 });
    const p = await Promise.all([fixed.acquire('r'), fixed.acquire('r'), fixed.acquire('r')]);
    for (const q of p) q.release({ kind: 'overloaded', status: 503, retryAfterMs: undefined });
    expect(fixed.stats()).toMatchObject({ mode: 'fixed', level: 3, count503: 3 });

    // A Retry-After of a day is honoured for a minute at most.
    const held = new EndpointLimiter('http://x/v1', 'm', adaptive);
    (await held.acquire('r')).release({ kind: 'overloaded', status: 429, retryAfterMs: 86_400_000 });
    expect(held.stats()).toMatchObject({ lastRetryAfterMs: 60_000, pausedForMs: expect.any(Number) });
    expect(held.stats().pausedForMs).toBeGreaterThan(50_000);
    expect(held.stats().pausedForMs).toBeLessThanOrEqual(60_000);

    const floored = new EndpointLimiter('http://x/v1', 'm', { ...adaptive, floor: 3 });
    for (let i = 0; i < 4; i++) (await floored.acquire('r')).release({ kind: 'overloaded', status: 429, retryAfterMs: undefined });
    expect(floored.level).toBe(3);

    const lifted = new EndpointLimiter('http://x/v1', 'm', adaptive);
    (await lifted.acquire('r', undefined, 1000)).release({ kind: 'other' });
    expect(lifted.level).toBe(64);
  });

  it('a waiting call whose signal aborts leaves the queue with the reason', async () => {
    const l = new EndpointLimiter('http://x/v1', 'm', { ...adaptive, fixed: 1 });
    const first = await l.acquire('a');
    const ac = new AbortController();
    const waiting = l.acquire('b', ac.signal);
    expect(l.stats().waiting).toBe(1);
    ac.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    expect(l.stats().waiting).toBe(0);
    first.release({ kind: 'other' });
    first.release({ kind: 'other' });
    expect(l.inFlight).toBe(0);
  });

  it('reads Retry-After as seconds, as a date and as retry-after-ms', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after': '2', 'retry-after-ms': '150' }))).toBe(150);
    expect(retryAfterMs(new Headers({ 'retry-after': new Date(10_000).toUTCString() }), 7000)).toBe(3000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });

  it('stats name the base URL without credentials, query or fragment', () => {
    const l = new EndpointLimiter('https://user:sk-secret@api.example.com/v1/?key=sk-secret#x', 'm', adaptive);
    expect(l.stats().baseUrl).toBe('https://api.example.com/v1');
  });

  it('config: max_concurrency set is a fixed level; unset, adaptive within concurrency_floor and concurrency_cap', () => {
    const env = { OPENAI_MODEL: 'm', OPENAI_API_KEY: 'k' };
    expect(readLlmConfig({}, env)).toMatchObject({ maxConcurrency: undefined, concurrencyFloor: 1, concurrencyCap: 4096 });
    expect(readLlmConfig({ max_concurrency: 8, concurrency_cap: 2048 }, env)).toMatchObject({ maxConcurrency: 8, concurrencyCap: 2048 });
    expect(() => readLlmConfig({ concurrency_floor: 64, concurrency_cap: 8 }, env)).toThrow(
      'config concurrency_floor (64) must not exceed concurrency_cap (8)',
    );
    expect(() => readLlmConfig({ concurrency_cap: 0 }, env)).toThrow('config concurrency_cap must be an integer ≥ 1, got 0');
  });
});

describe('the endpoint limit under llm__chat, against the stand-in', () => {
  const KEY = 'sk-limiter-test-9f1e';
  let stub: OpenAIStub;
  let tmp: string;
  let n = 0;
  const ctx = (run: string): CallContext => ({ runSeed: 1, episodeIndex: 0, seed: 7, step: 0, episodeKey: `${run}:${++n}`, nodeId: 'llm' });
  const ask = (i: number) => [{ role: 'user', content: `What is ${i} + 1?` }];
  /** A model name per test: each test gets its own limiter. */
  const config = (model: string, extra: Record<string, unknown> = {}) => ({
    base_url: stub.baseURL,
    model,
    api_key_env: 'LIMITER_TEST_API_KEY',
    cache: false,
    retry_base_ms: 1,
    max_retries: 30,
    ...extra,
  });
  const statsOf = (model: string): EndpointStats => endpointLimiterStats().find((e) => e.model === model)!;

  beforeAll(async () => {
    stub = await startOpenAIStub({ expectedKey: KEY });
    tmp = await mkdtemp(join(tmpdir(), 'llm-limiter-'));
    process.env.EVAL_LLM_CACHE_DIR = join(tmp, 'cache');
    process.env.LIMITER_TEST_API_KEY = KEY;
  });
  afterAll(async () => {
    await stub.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it('two runs on one endpoint progress at the same rate: the later run is not served after the earlier one', async () => {
    stub.setOptions({ expectedKey: KEY, latencyMs: 20 });
    const c = config('fair', { max_concurrency: 2 });
    const done: string[] = [];
    const call = (run: string, i: number) => chat({ inputs: { messages: ask(i) }, config: c, ctx: ctx(run) }).then(() => done.push(run));
    const early = Array.from({ length: 30 }, (_, i) => call('early', i));
    const late = Array.from({ length: 10 }, (_, i) => call('late', 100 + i));
    await Promise.all([...early, ...late]);
    // In arrival order the late run's 10 calls would be the last 10; turn by turn they end within the first 25.
    expect(done.lastIndexOf('late')).toBeLessThan(25);
    expect(statsOf('fair')).toMatchObject({ mode: 'fixed', level: 2, answered: 40, callers: ['early', 'late'] });
  });

  it('an endpoint over its limit: every call is answered, the level drops below it, then rises again once the limit is lifted', async () => {
    stub.setOptions({ expectedKey: KEY, latencyMs: 30, maxConcurrent: 4 });
    stub.reset();
    const c = config('overlimit');
    const outs = await Promise.all(Array.from({ length: 60 }, (_, i) => chat({ inputs: { messages: ask(i) }, config: c, ctx: ctx('r') })));
    expect(outs.map((o) => o.answer)).toEqual(Array.from({ length: 60 }, (_, i) => String(i + 1)));
    const after = statsOf('overlimit');
    expect(stub.stats().overLimit).toBeGreaterThan(0);
    expect(after.count429).toBe(stub.stats().overLimit);
    const retries = outs.reduce((t, o) => t + (o.usage as { llm_retries: number }).llm_retries, 0);
    expect(retries).toBe(stub.stats().overLimit);
    // Started at 16, cut back towards the endpoint's 4 (the sawtooth above it stays within a few steps).
    expect(after.level).toBeLessThan(10);

    stub.setOptions({ expectedKey: KEY, latencyMs: 30 });
    stub.reset();
    await Promise.all(Array.from({ length: 300 }, (_, i) => chat({ inputs: { messages: ask(1000 + i) }, config: c, ctx: ctx('r') })));
    expect(stub.stats().faults).toBe(0);
    expect(statsOf('overlimit').level).toBeGreaterThan(after.level + 5);
  });

  it('Retry-After holds every new call to the endpoint until it has passed', async () => {
    stub.setOptions({ expectedKey: KEY, latencyMs: 100, maxConcurrent: 1, retryAfterSec: 1 });
    stub.reset();
    // Fixed at 2: the second call is refused by the endpoint, not held by the level.
    const c = config('retry-after', { max_concurrency: 2 });
    let refusedAt = 0;
    const first = chat({ inputs: { messages: ask(1) }, config: c, ctx: ctx('r') });
    const second = chat({ inputs: { messages: ask(2) }, config: c, ctx: ctx('r') });
    const watch = (async () => {
      while (statsOf('retry-after')?.count429 !== 1) await new Promise((r) => setImmediate(r));
      refusedAt = Date.now();
    })();
    const [a, b] = await Promise.all([first, second, watch]);
    expect([a.answer, b.answer]).toEqual(['2', '3']);
    expect(stub.stats()).toMatchObject({ overLimit: 1, completions: 2 });
    expect(stub.stats().lastAcceptedAt - refusedAt).toBeGreaterThanOrEqual(990);
    expect(statsOf('retry-after')).toMatchObject({ lastRetryAfterMs: 1000, count429: 1 });
  });
});
