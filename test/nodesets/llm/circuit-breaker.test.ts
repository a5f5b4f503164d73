/** The circuit breaker per endpoint: its states on a clock of the test's own, then through callModel against the stand-in server. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callModel, InfraFailure } from '../../../src/nodesets/llm/call-model.js';
import { CircuitBreaker, CircuitOpenError } from '../../../src/nodesets/llm/circuit-breaker.js';
import { readLlmConfig } from '../../../src/nodesets/llm/llm-config.js';
import { startOpenAIStub, type OpenAIStub } from '../../support/openai-stub.js';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'llm-circuit-'));
  process.env.EVAL_LLM_CACHE_DIR = join(tmp, 'cache');
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('CircuitBreaker', () => {
  it('opens after N connection failures in a row, lets one probe through after the cool-down, closes on an answer', () => {
    let now = 0;
    const b = new CircuitBreaker('http://h/v1', { failures: 3, cooldownMs: 1000 }, () => now);
    b.failed('refused');
    b.failed('refused');
    // Any HTTP answer (a 500 included) proves the endpoint reachable: the count starts again.
    b.succeeded();
    b.failed('refused');
    b.failed('refused');
    expect(b.admit()).toBe(false);
    b.failed('connect ECONNREFUSED 127.0.0.1:9');
    expect(b.state).toBe('open');
    expect(() => b.admit()).toThrow(CircuitOpenError);
    expect(() => b.admit()).toThrow(
      'http://h/v1 is unreachable: 3 connection failure(s) in a row, the last: connect ECONNREFUSED 127.0.0.1:9; its calls fail at once until a probe call gets an answer',
    );
    now = 999;
    expect(() => b.admit()).toThrow(CircuitOpenError);
    now = 1000;
    expect(b.admit()).toBe(true);
    // While the probe is on its way, every other call still fails at once.
    expect(() => b.admit()).toThrow(CircuitOpenError);
    b.failed('reset');
    expect(b.state).toBe('open');
    now = 1500;
    expect(() => b.admit()).toThrow(CircuitOpenError);
    now = 2000;
    expect(b.admit()).toBe(true);
    // A probe whose episode was cancelled leaves the next call to probe.
    b.probeAbandoned();
    expect(b.admit()).toBe(true);
    b.succeeded();
    expect(b.state).toBe('closed');
    expect(b.admit()).toBe(false);
  });

  it('never opens with failures 0', () => {
    const b = new CircuitBreaker('http://h/v1', { failures: 0, cooldownMs: 0 });
    for (let i = 0; i < 50; i++) b.failed('refused');
    expect(b.admit()).toBe(false);
  });
});

describe('callModel behind the circuit', () => {
  let stub: OpenAIStub;
  beforeAll(async () => {
    stub = await startOpenAIStub({ faultRate: 1, faultKind: 'reset' });
  });
  afterAll(async () => {
    await stub.close();
  });
  const config = (extra: Record<string, unknown> = {}) =>
    readLlmConfig({
      base_url: stub.baseURL,
      model: 'm',
      api_key_env: '',
      cache: false,
      retry_base_ms: 1,
      max_retries: 10,
      circuit_failures: 3,
      circuit_cooldown_ms: 3_600_000,
      ...extra,
    });
  const call = (extra?: Record<string, unknown>) =>
    callModel({ config: config(extra), messages: [{ role: 'user', content: 'What is 1 + 2?' }], seed: 1, callNumber: 0 });

  it('HTTP errors never open it; connection resets do, and then calls fail at once with LLM_CIRCUIT_OPEN, no request sent', async () => {
    stub.setOptions({ faultRate: 1, faultKind: 500 });
    stub.reset();
    const served = await call({ max_retries: 5 }).catch((e: unknown) => e);
    expect(served).toBeInstanceOf(InfraFailure);
    expect((served as InfraFailure).code).toBeUndefined();
    expect((served as Error).message).toMatch(/failed after 6 attempt\(s\) \(HTTP 500\)/);
    expect(stub.stats().requests).toBe(6);

    stub.setOptions({ faultRate: 1, faultKind: 'reset' });
    stub.reset();
    const opened = await call().catch((e: unknown) => e);
    expect(opened).toBeInstanceOf(InfraFailure);
    expect(opened).toMatchObject({ code: 'LLM_CIRCUIT_OPEN' });
    expect((opened as InfraFailure).retries).toHaveLength(2);
    expect((opened as Error).message).toMatch(
      new RegExp(
        `^${stub.baseURL.replaceAll('.', '\\.')} is unreachable: 3 connection failure\\(s\\) in a row, the last: Connection error\\.`,
      ),
    );
    expect(stub.stats().requests).toBe(3);
    for (let i = 0; i < 5; i++) {
      const again = await call().catch((e: unknown) => e);
      expect(again).toMatchObject({ code: 'LLM_CIRCUIT_OPEN', retries: [] });
    }
    expect(stub.stats().requests).toBe(3);
  });

  it('after the cool-down one probe goes out: it fails and the circuit stays open, it succeeds and calls go through again', async () => {
    stub.setOptions({ faultRate: 1, faultKind: 'reset' });
    stub.reset();
    // The circuit of the test above, still open; a cool-down of 0 lets the next call probe.
    await expect(call({ circuit_cooldown_ms: 0 })).rejects.toMatchObject({ code: 'LLM_CIRCUIT_OPEN', retries: [] });
    expect(stub.stats().requests).toBe(1);
    stub.setOptions({});
    const answered = await call({ circuit_cooldown_ms: 0 });
    expect(answered.response.message.content).toBe('3');
    expect(stub.stats().requests).toBe(2);
    const next = await call();
    expect(next.response.message.content).toBe('3');
  });
});
