import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchedInferenceServer, type BatchedInferenceServerOptions } from '../../src/host/batched-inference-server.js';
import type { BatchedNodeFunction, CallContext, NodeCallArgs } from '../../src/core/types.js';

const ctx = (callerId?: string, step = 0): CallContext => ({
  runSeed: 0,
  episodeIndex: 0,
  seed: 1,
  step,
  episodeKey: 'r:0',
  nodeId: 'policy',
  ...(callerId !== undefined ? { callerId } : {}),
});
const row = (x: unknown, callerId?: string, config: Record<string, unknown> = {}): NodeCallArgs => ({
  inputs: { x },
  config,
  ctx: ctx(callerId),
});

async function waitUntil(probe: () => boolean): Promise<void> {
  while (!probe()) await sleep(1);
}

/** Records every batch it is called with and answers each row with its x doubled. */
function recorder(): { handler: BatchedNodeFunction; batches: unknown[][]; times: number[] } {
  const batches: unknown[][] = [];
  const times: number[] = [];
  return {
    batches,
    times,
    handler: (rows) => {
      batches.push(rows.map((r) => r.inputs.x));
      times.push(performance.now());
      return rows.map((r) => ({ y: (r.inputs.x as number) * 2 }));
    },
  };
}

describe('BatchedInferenceServer', () => {
  const servers: BatchedInferenceServer[] = [];
  const make = (o: BatchedInferenceServerOptions): BatchedInferenceServer => {
    const s = new BatchedInferenceServer(o);
    servers.push(s);
    return s;
  };
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
  });

  it('coalesces calls with the same function and config (whatever the key order), and only those', async () => {
    const s = make({ maxQueueDelayMs: 30 });
    const r = recorder();
    const calls = [
      s.submit('act', { a: 1, b: { c: 2, d: 3 } }, row(1, undefined, { a: 1, b: { c: 2, d: 3 } }), r.handler),
      s.submit('act', { b: { d: 3, c: 2 }, a: 1 }, row(2), r.handler),
      s.submit('act', { a: 2 }, row(3), r.handler),
      s.submit('other', { a: 1, b: { c: 2, d: 3 } }, row(4), r.handler),
    ];
    const out = await Promise.all(calls);
    expect(out.map((o) => o.y)).toEqual([2, 4, 6, 8]);
    expect(r.batches.map((b) => [...b].sort())).toEqual(expect.arrayContaining([[1, 2], [3], [4]]));
    expect(r.batches).toHaveLength(3);
  });

  it('runs a queue maxQueueDelayMs after its first arrival; calls arriving meanwhile join it', async () => {
    const s = make({ maxQueueDelayMs: 300 });
    const r = recorder();
    const t0 = performance.now();
    const first = s.submit('act', {}, row(1), r.handler);
    await sleep(100);
    const second = s.submit('act', {}, row(2), r.handler);
    await Promise.all([first, second]);
    expect(r.batches).toEqual([[1, 2]]);
    // Not pushed back by the second arrival: due 300 ms after the first.
    expect(r.times[0]! - t0).toBeGreaterThanOrEqual(295);
    expect(r.times[0]! - t0).toBeLessThan(1000);
  });

  it('does not hold a call for a caller that is waiting in another queue (another config): every active caller waits', async () => {
    const s = make({ maxQueueDelayMs: 10_000, callerTtlMs: 60_000 });
    const r = recorder();
    // Two runs with different configs share the host: each one's calls form their own queue.
    await s.submit('act', { epsilon: 0.5 }, row(1, 'a/w0', { epsilon: 0.5 }), r.handler);
    const t0 = performance.now();
    // b/w0 waits for a/w0, a known caller; once a/w0 waits too (in its own queue), nobody else can come.
    const both = Promise.all([
      s.submit('act', { epsilon: 0.9 }, row(2, 'b/w0', { epsilon: 0.9 }), r.handler),
      s.submit('act', { epsilon: 0.5 }, row(3, 'a/w0', { epsilon: 0.5 }), r.handler),
    ]);
    const late = new Promise((resolve) => setTimeout(resolve, 5000, 'held'));
    expect(await Promise.race([both.then(() => 'served'), late])).toBe('served');
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(r.batches.slice(-2).flat().sort()).toEqual([2, 3]);
  });

  it('while a batch runs, new calls pile up and go together as soon as the model is free', async () => {
    const s = make({ maxQueueDelayMs: 0 });
    const batches: number[][] = [];
    let free: (() => void) | undefined;
    const handler: BatchedNodeFunction = async (rows) => {
      batches.push(rows.map((x) => x.inputs.x as number));
      if (batches.length === 1) await new Promise<void>((resolve) => (free = resolve));
      return rows.map(() => ({}));
    };
    const first = s.submit('act', {}, row(1), handler);
    await waitUntil(() => free !== undefined);
    const rest = [2, 3, 4].map((x) => s.submit('act', {}, row(x), handler));
    await sleep(30);
    expect(batches).toEqual([[1]]);
    free!();
    await Promise.all([first, ...rest]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('flushes at once at maxBatchSize', async () => {
    const s = make({ maxBatchSize: 3, maxQueueDelayMs: 10_000 });
    const r = recorder();
    const t0 = performance.now();
    await Promise.all([1, 2, 3].map((x) => s.submit('act', {}, row(x), r.handler)));
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(r.batches).toEqual([[1, 2, 3]]);
  });

  it('flushes at once when the queue holds a call from every active caller, and when a missing caller is released', async () => {
    const s = make({ maxQueueDelayMs: 10_000, callerTtlMs: 60_000 });
    const r = recorder();
    // Callers become known by calling: w0 alone is every active caller, so it runs at once; then
    // w1 and w2 wait for w0, whose next call completes the set.
    await Promise.all(['w0', 'w1', 'w2', 'w0'].map((w) => s.submit('act', {}, row(0, w), r.handler)));
    expect(r.batches).toEqual([[0], [0, 0, 0]]);
    r.batches.length = 0;

    const t0 = performance.now();
    await Promise.all(['w0', 'w1', 'w2'].map((w, i) => s.submit('act', {}, row(i + 1, w), r.handler)));
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(r.batches).toEqual([[1, 2, 3]]);

    // Two of three active callers waiting: no flush until the third is released.
    let settled = false;
    const two = Promise.all([s.submit('act', {}, row(4, 'w0'), r.handler), s.submit('act', {}, row(5, 'w1'), r.handler)]).then((v) => {
      settled = true;
      return v;
    });
    await sleep(300);
    expect(settled).toBe(false);
    const tRelease = performance.now();
    s.releaseCaller('w2');
    await two;
    expect(performance.now() - tRelease).toBeLessThan(1000);
    expect(r.batches.at(-1)).toEqual([4, 5]);
  });

  it('never waits longer than maxQueueDelayMs after the first arrival, even under steady load', async () => {
    const s = make({ maxQueueDelayMs: 150, maxBatchSize: 1000 });
    const r = recorder();
    const t0 = performance.now();
    const pending: Array<Promise<unknown>> = [];
    // An arrival every 20 ms for a second: the queue still goes 150 ms after its first arrival.
    for (let i = 0; i < 50; i++) {
      pending.push(s.submit('act', {}, row(i), r.handler));
      await sleep(20);
    }
    await Promise.all(pending);
    const first = r.times[0]! - t0;
    expect(first).toBeGreaterThanOrEqual(145);
    expect(first).toBeLessThan(700);
    expect(r.batches.length).toBeGreaterThanOrEqual(3);
    expect(r.batches.flat()).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('runs one handler call at a time across all queues', async () => {
    const s = make({ maxBatchSize: 1, maxQueueDelayMs: 0 });
    let running = 0;
    let peak = 0;
    const handler: BatchedNodeFunction = async (rows) => {
      running += 1;
      peak = Math.max(peak, running);
      await sleep(20);
      running -= 1;
      return rows.map(() => ({}));
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => s.submit(i % 2 === 0 ? 'a' : 'b', { k: i % 3 }, row(i), handler)));
    expect(peak).toBe(1);
    expect(s.stats()).toEqual({ batches: 8, rows: 8, meanBatchSize: 1 });
  });

  it('fails every caller of a batch whose handler throws, and serves the next batch', async () => {
    const s = make({ maxQueueDelayMs: 10 });
    const boom: BatchedNodeFunction = () => {
      throw new Error('weights missing');
    };
    const results = await Promise.allSettled([1, 2, 3].map((x) => s.submit('act', {}, row(x), boom)));
    for (const res of results) {
      expect(res.status).toBe('rejected');
      expect(String((res as PromiseRejectedResult).reason.message)).toMatch(/batched function "act" failed: weights missing/);
    }
    await expect(s.submit('act', {}, row(4), recorder().handler)).resolves.toEqual({ y: 8 });
  });

  it('fails a batch whose handler returns the wrong number of rows', async () => {
    const s = make({ maxQueueDelayMs: 10 });
    const short: BatchedNodeFunction = (rows) => rows.slice(1).map(() => ({}));
    const results = await Promise.allSettled([1, 2].map((x) => s.submit('act', {}, row(x), short)));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason.message).toMatch(/returned 1 rows for a batch of 2 rows/);
  });

  it('fails a batch whose handler hangs past handlerTimeoutMs and releases the lock', async () => {
    const s = make({ maxQueueDelayMs: 5, handlerTimeoutMs: 150 });
    const hang: BatchedNodeFunction = () => new Promise(() => {});
    const t0 = performance.now();
    const hung = Promise.allSettled([1, 2].map((x) => s.submit('act', {}, row(x), hang)));
    const next = s.submit('other', {}, row(3), recorder().handler);
    const results = await hung;
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason.message).toMatch(/did not answer a batch of 2 within 150 ms/);
    await expect(next).resolves.toEqual({ y: 6 });
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('is batch-invariant: one input alone and inside a batch of 7 gives identical bytes', async () => {
    // A row-by-row two-layer MLP in float32, the shape of a policy network.
    const W1 = Array.from({ length: 16 }, (_, i) => Array.from({ length: 4 }, (_, j) => Math.fround(Math.sin(i * 4 + j) * 0.7)));
    const W2 = Array.from({ length: 2 }, (_, i) => Array.from({ length: 16 }, (_, j) => Math.fround(Math.cos(i * 16 + j) * 0.3)));
    const mlp: BatchedNodeFunction = (rows) =>
      rows.map((r) => {
        const x = r.inputs.x as number[];
        const h = W1.map((w) =>
          Math.fround(Math.tanh(Math.fround(w.reduce((acc, wj, j) => Math.fround(acc + Math.fround(wj * x[j]!)), 0)))),
        );
        const logits = W2.map((w) => w.reduce((acc, wj, j) => Math.fround(acc + Math.fround(wj * h[j]!)), 0));
        return { logits, action: logits[0]! >= logits[1]! ? 0 : 1 };
      });
    const probe = [0.013, -0.72, 0.05, 1.3];
    const alone = make({ maxQueueDelayMs: 0 });
    const aloneBytes = JSON.stringify(await alone.submit('act', {}, row(probe), mlp));

    const batched = make({ maxBatchSize: 7, maxQueueDelayMs: 10_000 });
    const others = Array.from({ length: 6 }, (_, i) => [i * 0.1, -i, i * i * 0.01, 0.5 - i]);
    const inputs = [...others.slice(0, 3), probe, ...others.slice(3)];
    const outs = await Promise.all(inputs.map((x) => batched.submit('act', {}, row(x), mlp)));
    expect(batched.stats()).toEqual({ batches: 1, rows: 7, meanBatchSize: 7 });
    expect(JSON.stringify(outs[3])).toBe(aloneBytes);
  });

  it('drops a waiting call whose signal aborts, and the rest of its batch still runs', async () => {
    const s = make({ maxQueueDelayMs: 50 });
    const r = recorder();
    const ac = new AbortController();
    const a = s.submit('act', {}, { ...row(1), signal: ac.signal }, r.handler);
    const b = s.submit('act', {}, row(2), r.handler);
    ac.abort(new Error('episode cancelled'));
    await expect(a).rejects.toThrow('episode cancelled');
    await expect(b).resolves.toEqual({ y: 4 });
    expect(r.batches).toEqual([[2]]);
  });

  it('drops a waiting call its onAbandon hook gives up on, without reading its signal', async () => {
    const s = make({ maxQueueDelayMs: 50 });
    const r = recorder();
    let abandon: ((reason: unknown) => void) | undefined;
    const untouchable = {
      ...row(1),
      get signal(): AbortSignal {
        throw new Error('the signal was read');
      },
    };
    const a = s.submit('act', {}, untouchable, r.handler, (cb) => (abandon = cb));
    const b = s.submit('act', {}, row(2), r.handler);
    abandon!(new Error('the caller went away'));
    await expect(a).rejects.toThrow('the caller went away');
    await expect(b).resolves.toEqual({ y: 4 });
    expect(r.batches).toEqual([[2]]);
    // Once its batch has run, a late abandon changes nothing.
    let late: ((reason: unknown) => void) | undefined;
    const c = s.submit('act', {}, row(3), r.handler, (cb) => (late = cb));
    await expect(c).resolves.toEqual({ y: 6 });
    late!(new Error('too late'));
  });

  it('close() fails waiting calls, refuses new ones and is idempotent', async () => {
    const s = make({ maxQueueDelayMs: 10_000 });
    const r = recorder();
    const waiting = s.submit('act', {}, row(1), r.handler);
    s.close();
    s.close();
    await expect(waiting).rejects.toThrow(/closed before the batch ran/);
    await expect(s.submit('act', {}, row(2), r.handler)).rejects.toThrow(/closed/);
    expect(r.batches).toEqual([]);
  });

  it('refuses a bad option with its name and value', () => {
    expect(() => new BatchedInferenceServer({ maxBatchSize: 0 })).toThrow(/maxBatchSize must be a number ≥ 1, got 0/);
  });
});
