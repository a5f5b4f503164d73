/**
 * startHost serves a nodeset that declares `inProcess` inside this process: the same routes,
 * answers and errors as its host process, JSON semantics included, an abort reaching the
 * handler as a caller hanging up, and a stopped host failing its calls as a dead one does.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallContext } from '../../src/core/types.js';
import { IN_PROCESS_ENV, hostMode, runsInProcess, startHost, type RunHost } from '../../src/eval-process/in-process-host.js';
import { HostClient } from '../../src/host/host-client.js';
import { placeForRun, heavyInRun } from '../../src/nodeset-registry/placement.js';
import { loadManifest } from '../../src/nodeset-registry/manifest.js';
import type { HostEntry } from '../../src/host/host-process.js';

const ECHO_DIR = join(import.meta.dirname, '..', 'fixtures', 'nodesets', 'echo');

const ctx = (over: Partial<CallContext> = {}): CallContext => ({
  runSeed: 7,
  episodeIndex: 2,
  seed: 12345,
  step: 0,
  episodeKey: 'run1:2',
  nodeId: 'n',
  ...over,
});

let entry: HostEntry;

beforeAll(async () => {
  const manifest = await loadManifest(ECHO_DIR);
  entry = { name: manifest.name, dir: ECHO_DIR, manifest: { ...manifest, inProcess: true } };
});

describe('startHost with an in-process nodeset', () => {
  let host: RunHost;
  let client: HostClient;

  beforeAll(async () => {
    host = await startHost({ entry, tag: '0' });
    client = new HostClient(host.url);
  });
  afterAll(async () => {
    client?.close();
    await host?.stop();
  });

  it('is served in this process under an inproc:// URL, with its panel and health', async () => {
    expect(host.inProcess).toBe(true);
    expect(host.url).toMatch(/^inproc:\/\/echo-0\.\d+$/);
    expect(host.alive).toBe(true);
    expect(await client.health()).toEqual({ ok: true, nodeset: 'echo', tag: '0', pid: process.pid });
    expect((await client.panelField('dataset', 'beta')).values.dataset).toBe('beta');
  });

  it('a call crosses as JSON, as over HTTP: NaN becomes null, undefined keys drop, the answer is a copy', async () => {
    const inputs = { x: { a: Number.NaN, b: undefined, c: [1, 'two'] } };
    const out = await client.call({ function: 'echo', inputs, config: { k: 1 }, ctx: ctx({ step: 3 }) });
    expect(out).toEqual({ x: { a: null, c: [1, 'two'] }, seed: 12345, step: 3, tag: null, pid: process.pid, config: { k: 1 } });
    expect(out.x).not.toBe(inputs.x);
  });

  it('a failing node is a HostError with its message; an unknown function names the functions', async () => {
    await expect(client.call({ function: 'fail', inputs: { why: 'x' }, config: {}, ctx: ctx() })).rejects.toMatchObject({
      code: 'HOST_ERROR',
      message: 'boom: x',
    });
    await expect(client.call({ function: 'nope', inputs: {}, config: {}, ctx: ctx() })).rejects.toThrow(/unknown function "nope".*echo/);
  });

  it('an abort rejects the call with its reason and aborts the handler as a hang-up does', async () => {
    const abort = new AbortController();
    const call = client.call({ function: 'sleep', inputs: {}, config: { ms: 60_000 }, ctx: ctx() }, abort.signal);
    abort.abort(new Error('cancelled here'));
    await expect(call).rejects.toThrow('cancelled here');
    expect(await client.call({ function: 'lastAbort', inputs: {}, config: {}, ctx: ctx() })).toEqual({ reason: 'the caller went away' });
  });

  it('batched calls go through the host batcher', async () => {
    const row = (x: number, callerId: string) =>
      client.call({ function: 'double', inputs: { x }, config: {}, ctx: ctx({ callerId, episodeKey: callerId }) });
    const [a, b] = await Promise.all([row(1, 'c1'), row(2, 'c2')]);
    expect(a).toMatchObject({ y: 2 });
    expect(b).toMatchObject({ y: 4 });
    expect((await client.stats()).batcher).toMatchObject({ rows: 2 });
  });
});

describe('startHost', () => {
  it('a stopped in-process host fails its calls as a host that is gone (HOST_DIED)', async () => {
    const host = await startHost({ entry });
    const client = new HostClient(host.url);
    try {
      await host.stop();
      expect(host.alive).toBe(false);
      expect(await host.exited).toEqual({ code: 0, signal: null });
      await expect(client.health()).rejects.toMatchObject({ code: 'HOST_DIED' });
    } finally {
      client.close();
    }
  });

  it(`${IN_PROCESS_ENV} names nodesets to serve in-process besides those that declare it`, async () => {
    const plain: HostEntry = { ...entry, manifest: { ...entry.manifest, inProcess: false } };
    expect(runsInProcess(plain, {})).toBe(false);
    expect(runsInProcess(plain, { [IN_PROCESS_ENV]: 'planner, echo' })).toBe(true);
    expect(runsInProcess(plain, { [IN_PROCESS_ENV]: 'planner' })).toBe(false);
    expect(runsInProcess(entry, { [IN_PROCESS_ENV]: 'planner' })).toBe(true);
    expect(runsInProcess(entry, { [IN_PROCESS_ENV]: '0' })).toBe(false);
    const command: HostEntry = { ...plain, manifest: { ...plain.manifest, module: undefined, command: ['python3', 'host.py'] } };
    expect(runsInProcess(command, { [IN_PROCESS_ENV]: 'echo' })).toBe(false);
  });

  it('placeForRun serves an inlineUnless nodeset on this thread unless the run sets one of its keys', () => {
    const functions = entry.manifest.functions.map((fn, i) =>
      i === 0
        ? { ...fn, config: { ...fn.config, work_ms: { default: 0 }, crash_at: { type: 'integer' as const }, opts: { default: { a: 1 } } } }
        : fn,
    );
    const threaded: HostEntry = {
      ...entry,
      manifest: { ...entry.manifest, functions, inProcess: 'thread', inlineUnless: ['work_ms', 'crash_at', 'opts'] },
    };
    const uses = (...configs: Record<string, unknown>[]) => configs.map((config) => ({ config, fn: functions[0]! }));
    const place = (...configs: Record<string, unknown>[]) => hostMode(placeForRun(threaded, uses(...configs)), {});
    expect(place()).toBe('inline');
    expect(place({}, { work_ms: 0, opts: { a: 1 }, other: 5 })).toBe('inline');
    expect(place({}, { work_ms: 10 })).toBe('thread');
    expect(place({ crash_at: 3 })).toBe('thread');
    expect(place({ opts: { a: 2 } })).toBe('thread');
    // null is "unset" to graph validation, so it asks for nothing here either.
    expect(place({ work_ms: null, crash_at: null })).toBe('inline');
    // The user's switch still wins, and a manifest without the key is left as it is.
    expect(hostMode(placeForRun(threaded, uses({})), { [IN_PROCESS_ENV]: '0' })).toBe('process');
    const plain: HostEntry = { ...threaded, manifest: { ...threaded.manifest, inlineUnless: undefined } };
    expect(placeForRun(plain, uses({}))).toBe(plain);
  });

  it('placeForRun keeps a heavyWith nodeset on this thread, and its heavyWith only in a run that sets one of its keys', () => {
    const functions = entry.manifest.functions.map((fn, i) =>
      i === 0 ? { ...fn, config: { ...fn.config, work_ms: { default: 0 }, crash_at: { type: 'integer' as const } } } : fn,
    );
    const manifest = { ...entry.manifest, functions, inProcess: 'thread' as const, inlineUnless: ['crash_at'], heavyWith: ['work_ms'] };
    const uses = (config: Record<string, unknown>) => [{ config, fn: functions[0]! }];
    const light = placeForRun({ ...entry, manifest }, uses({ work_ms: 0 }));
    const heavy = placeForRun({ ...entry, manifest }, uses({ work_ms: 10 }));
    const unsafe = placeForRun({ ...entry, manifest }, uses({ work_ms: 10, crash_at: 3 }));
    expect([hostMode(light, {}), hostMode(heavy, {}), hostMode(unsafe, {})]).toEqual(['inline', 'inline', 'thread']);
    expect([light.manifest.heavyWith, heavy.manifest.heavyWith]).toEqual([undefined, ['work_ms']]);
    expect([heavyInRun(light.manifest), heavyInRun(heavy.manifest), heavyInRun(unsafe.manifest)]).toEqual([false, true, true]);
  });

  it(`${IN_PROCESS_ENV}=0 starts a child process instead`, async () => {
    const host = await startHost({ entry, env: { [IN_PROCESS_ENV]: '0' } });
    const client = new HostClient(host.url);
    try {
      expect(host.inProcess).toBe(false);
      expect(host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await client.health()).pid).not.toBe(process.pid);
    } finally {
      client.close();
      await host.stop();
    }
  });
});
