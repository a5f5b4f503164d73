import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostClient } from '../../src/host/host-client.js';
import { spawnHost, type HostProcess } from '../../src/host/host-process.js';
import { loadManifest } from '../../src/nodeset-registry/manifest.js';
import { createHost } from '../../src/host/host.js';
import type { CallContext, HostCallRequest, NodesetManifest, NodesetModule } from '../../src/core/types.js';
import { hostSecretFor } from '../../src/host/host-secret.js';

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
const req = (fn: string, inputs: Record<string, unknown> = {}, config: Record<string, unknown> = {}, c = ctx()): HostCallRequest => ({
  function: fn,
  inputs,
  config,
  ctx: c,
});

/** A raw request, for what HostClient never sends. */
function raw(url: string, method: string, path: string, body?: string): Promise<{ status: number; json: { error?: string } }> {
  return new Promise((resolve, reject) => {
    // A raw caller of its own: it presents the host's secret as HostClient would.
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${hostSecretFor(url) ?? ''}` };
    const r = http.request(`${url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    r.on('error', reject);
    r.end(body);
  });
}

describe('host (echo fixture in its own process)', () => {
  let host: HostProcess;
  let client: HostClient;

  beforeAll(async () => {
    const manifest = await loadManifest(ECHO_DIR);
    host = await spawnHost({ entry: { name: manifest.name, dir: ECHO_DIR, manifest }, tag: 'h1' });
    client = new HostClient(host.url);
  });
  afterAll(async () => {
    client?.close();
    await host?.stop();
  });

  it('GET /manifest serves the nodeset manifest and GET /health names nodeset, tag and pid', async () => {
    const m = await client.manifest();
    expect(m.name).toBe('echo');
    expect(m.functions.map((f) => f.name)).toContain('double');
    expect(await client.health()).toEqual({ ok: true, nodeset: 'echo', tag: 'h1', pid: host.pid });
  });

  it('POST /call runs the function with inputs, config and the call context', async () => {
    const out = await client.call(req('echo', { x: [1, 'two', { three: 3 }] }, { gain: 2 }, ctx({ step: 4 })));
    expect(out).toEqual({ x: [1, 'two', { three: 3 }], seed: 12345, step: 4, tag: 'h1', pid: host.pid, config: { gain: 2 } });
  });

  it('an unknown function is a 404 naming the functions; a handler that throws answers {error} with its message', async () => {
    await expect(client.call(req('nope'))).rejects.toThrow(
      'unknown function "nope" in nodeset "echo"; functions: echo, fail, count, sleep, lastAbort, double',
    );
    const res = await raw(host.url, 'POST', '/call', JSON.stringify(req('nope')));
    expect(res.status).toBe(404);
    await expect(client.call(req('fail', { why: 'the wall' }))).rejects.toMatchObject({ code: 'HOST_ERROR', message: 'boom: the wall' });
    // The host survives a failing handler.
    await expect(client.call(req('echo', { x: 1 }))).resolves.toMatchObject({ x: 1 });
  });

  it('a call whose signal aborts rejects at once with the reason, and the handler sees its signal abort', async () => {
    const t0 = performance.now();
    await expect(client.call(req('sleep', {}, { ms: 10_000 }), AbortSignal.timeout(200))).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - t0).toBeLessThan(5000);
    await expect.poll(async () => (await client.call(req('lastAbort'))).reason).toBe('the caller went away');
  });

  it('bad requests get a 400 naming the problem, unknown routes a 404', async () => {
    expect(await raw(host.url, 'POST', '/call', '{not json')).toMatchObject({
      status: 400,
      json: { error: expect.stringMatching(/not valid JSON/) },
    });
    expect(await raw(host.url, 'POST', '/call', JSON.stringify({ function: 'echo' }))).toMatchObject({
      status: 400,
      json: { error: expect.stringMatching(/"ctx" must be an object/) },
    });
    expect(await raw(host.url, 'GET', '/nowhere')).toMatchObject({
      status: 404,
      json: { error: expect.stringMatching(/no route GET \/nowhere/) },
    });
  });

  it('batched functions coalesce concurrent calls into one batch and answer each row (GET /stats counts them)', async () => {
    const before = await client.stats();
    const outs = await Promise.all([1, 2, 3, 4, 5].map((x) => client.call(req('double', { x }))));
    expect(outs.map((o) => o.y)).toEqual([2, 4, 6, 8, 10]);
    expect(outs.every((o) => o.batchSize === 5)).toBe(true);
    const after = await client.stats();
    expect(after.calls - before.calls).toBe(5);
    expect(after.batcher!.batches - before.batcher!.batches).toBe(1);
    expect(after.batcher!.rows - before.batcher!.rows).toBe(5);
  });

  it('panel: defaults, cascade resets dependent fields, bad values name the allowed ones', async () => {
    expect(await client.panel()).toEqual({
      values: { dataset: 'alpha', split: 'val', episode: 0 },
      options: { dataset: ['alpha', 'beta'], split: ['train', 'val'], episode: [0, 1, 2] },
    });
    expect((await client.panelField('episode', 2)).values).toEqual({ dataset: 'alpha', split: 'val', episode: 2 });
    // Changing the dataset resets split (to its default when allowed, else the first option) and, through it, episode.
    expect(await client.panelField('dataset', 'beta')).toEqual({
      values: { dataset: 'beta', split: 'test', episode: 0 },
      options: { dataset: ['alpha', 'beta'], split: ['test'], episode: [0, 1] },
    });
    await expect(client.panelField('split', 'val')).rejects.toThrow('bad value "val" for panel field "split"; allowed: "test"');
    await expect(client.panelField('episode', 9)).rejects.toThrow('allowed: 0, 1');
    await expect(client.panelField('colour', 'red')).rejects.toThrow('unknown panel field "colour"; fields: dataset, split, episode');
    // A number given as a string matches the numeric option.
    expect((await client.panelField('episode', '1')).values.episode).toBe(1);
    expect((await client.panelField('dataset', 'alpha')).values).toEqual({ dataset: 'alpha', split: 'val', episode: 0 });
  });

  it('panel: declared actions are accepted, others refused; load describes the selected episode', async () => {
    await client.panelField('dataset', 'alpha');
    await client.panelField('split', 'train');
    await client.panelField('episode', 4);
    expect((await client.panelAction('play')).values).toEqual({ dataset: 'alpha', split: 'train', episode: 4 });
    await expect(client.panelAction('rewind')).rejects.toThrow('unknown panel action "rewind"; actions: play, stop');
    expect(await client.panelLoad('runP:4')).toEqual({
      episodeId: 'alpha/train/4',
      scene: 'scene-alpha',
      instruction: 'count to the limit',
      stepBudget: 14,
    });
  });

  it('panel: a load that carries its values loads their selection, checked in cascade order, and leaves the panel state alone', async () => {
    await client.panelField('dataset', 'alpha');
    const before = await client.panel();
    expect(await client.panelLoad('runV:1', undefined, { dataset: 'beta', episode: 1 })).toMatchObject({ episodeId: 'beta/test/1' });
    expect(await client.panelLoad('runV:2', undefined, { dataset: 'alpha', split: 'train', episode: '4' })).toMatchObject({
      episodeId: 'alpha/train/4',
    });
    expect(await client.panel()).toEqual(before);
    await expect(client.panelLoad('runV:3', undefined, { dataset: 'beta', split: 'val' })).rejects.toThrow(
      'bad value "val" for panel field "split"; allowed: "test"',
    );
    await expect(client.panelLoad('runV:3', undefined, { colour: 'red' })).rejects.toThrow('unknown panel field "colour"');
  });

  it('evict drops the keyed state of one episode only', async () => {
    const a = ctx({ episodeKey: 'runE:0' });
    const b = ctx({ episodeKey: 'runE:1' });
    await client.call(req('count', {}, {}, a));
    expect((await client.call(req('count', {}, {}, a))).count).toBe(2);
    expect((await client.call(req('count', {}, {}, b))).count).toBe(1);
    await client.evict('runE:0');
    expect((await client.call(req('count', {}, {}, a))).count).toBe(1);
    expect((await client.call(req('count', {}, {}, b))).count).toBe(2);
    await expect(client.evict('')).rejects.toThrow(/"episodeKey" must be a non-empty string/);
  });

  it('POST /callers/release forgets a caller of the batcher and checks its input', async () => {
    const call = (x: number, callerId: string): Promise<Record<string, unknown>> =>
      client.call(req('double', { x }, {}, ctx({ callerId })));
    await Promise.all([call(1, 'wA'), call(1, 'wB')]);
    await client.releaseCaller('wA');
    await client.releaseCaller('wB');
    await expect(client.releaseCaller('')).rejects.toThrow(/"callerId"/);
  });
});

describe('host with injected delays', () => {
  it('adds random delays before calls without changing any result', async () => {
    const manifest = await loadManifest(ECHO_DIR);
    const entry = { name: manifest.name, dir: ECHO_DIR, manifest };
    const [plain, delayed] = await Promise.all([spawnHost({ entry }), spawnHost({ entry, env: { EVAL_HOST_INJECT_DELAY_MS: '15' } })]);
    const a = new HostClient(plain.url);
    const b = new HostClient(delayed.url);
    try {
      const calls = Array.from({ length: 20 }, (_, i) => req('echo', { x: i }, {}, ctx({ step: i })));
      const strip = (o: Record<string, unknown>): Record<string, unknown> => ({ ...o, pid: 0 });
      const plainOut = [];
      for (const c of calls) plainOut.push(strip(await a.call(c)));
      const t0 = performance.now();
      const delayedOut = [];
      for (const c of calls) delayedOut.push(strip(await b.call(c)));
      expect(delayedOut).toEqual(plainOut);
      // 20 calls with a uniform 0–15 ms delay each: about 150 ms in all.
      expect(performance.now() - t0).toBeGreaterThan(40);
    } finally {
      a.close();
      b.close();
      await Promise.all([plain.stop(), delayed.stop()]);
    }
  });
});

describe('createHost (in this process)', () => {
  const manifest: NodesetManifest = {
    name: 'tiny',
    parallelism: 'shared',
    module: 'unused.js',
    functions: [{ name: 'add', inputs: [{ name: 'a' }, { name: 'b' }], outputs: [{ name: 'sum' }] }],
  };
  const mod: NodesetModule = { functions: { add: ({ inputs }) => ({ sum: (inputs.a as number) + (inputs.b as number) }) } };

  it('serves on 127.0.0.1, answers 404 for the panel of a nodeset without one, and closes idempotently', async () => {
    const host = createHost({ manifest, dir: '.', module: mod });
    const port = await host.listen(0);
    const client = new HostClient(`http://127.0.0.1:${port}`);
    try {
      expect(await client.call(req('add', { a: 2, b: 3 }))).toEqual({ sum: 5 });
      expect(await client.health()).toEqual({ ok: true, nodeset: 'tiny', tag: null, pid: process.pid });
      await expect(client.panel()).rejects.toThrow('nodeset "tiny" has no panel');
      expect(await client.stats()).toEqual({ calls: 1, batcher: null, endpoints: [] });
    } finally {
      client.close();
      await Promise.all([host.close(), host.close()]);
    }
    await expect(new HostClient(`http://127.0.0.1:${port}`).health()).rejects.toMatchObject({ code: 'HOST_DIED' });
  });

  it('prices selected episodes with the panel cost (null where it throws), and answers null for a panel without one', async () => {
    const panelled: NodesetManifest = { ...manifest, panel: { fields: [{ name: 'episode' }], actions: [] } };
    const panel = {
      options: () => [0, 1, 2, 3],
      load: (values: Record<string, unknown>) => ({ episodeId: `e${String(values.episode)}` }),
    };
    const priced = createHost({
      manifest: panelled,
      dir: '.',
      module: {
        ...mod,
        panel: {
          ...panel,
          cost: (v) => {
            if (v.episode === 3) throw new Error('no price');
            return 10 - Number(v.episode);
          },
        },
      },
    });
    const unpriced = createHost({ manifest: panelled, dir: '.', module: { ...mod, panel } });
    const url = `http://127.0.0.1:${await priced.listen(0)}`;
    const clients = [new HostClient(url), new HostClient(`http://127.0.0.1:${await unpriced.listen(0)}`)];
    try {
      const selections = [{ episode: 0 }, { episode: 2 }, { episode: 3 }];
      expect(await clients[0]!.panelCosts(selections)).toEqual([10, 8, null]);
      // A selection the panel does not offer is unpriced too (its load reports it in full).
      expect(await clients[0]!.panelCosts([{ episode: 9 }])).toEqual([null]);
      expect(await clients[1]!.panelCosts(selections)).toBeNull();
      const bad = await raw(url, 'POST', '/panel/costs', JSON.stringify({ selections: 'all' }));
      expect(bad.status).toBe(400);
      expect(bad.json.error).toContain('"selections" must be an array of panel values');
    } finally {
      for (const c of clients) c.close();
      await Promise.all([priced.close(), unpriced.close()]);
    }
  });

  it('names the output numbers JSON writes as null (NaN, ±Infinity) in $nonFinite, and adds nothing when every number is finite', async () => {
    const odd: NodesetManifest = {
      ...manifest,
      functions: [
        { name: 'add', inputs: [{ name: 'a' }, { name: 'b' }], outputs: [{ name: 'sum' }, { name: 'metrics' }, { name: 'list' }] },
      ],
    };
    const host = createHost({
      manifest: odd,
      dir: '.',
      module: {
        functions: {
          add: ({ inputs }) => {
            const sum = (inputs.a as number) / (inputs.b as number);
            return { sum, metrics: { ratio: sum, bad: -sum, zero: 0, nested: { x: Number.NaN } }, list: [Number.NaN] };
          },
        },
      },
    });
    const client = new HostClient(`http://127.0.0.1:${await host.listen(0)}`);
    try {
      expect(await client.call(req('add', { a: 1, b: 0 }))).toEqual({
        sum: null,
        metrics: { ratio: null, bad: null, zero: 0, nested: { x: null } },
        list: [null],
        // Ports and the entries of an object on a port (what a graphOut takes as metrics); deeper values and arrays are not metrics.
        $nonFinite: [
          { port: 'sum', value: 'Infinity' },
          { port: 'metrics', key: 'ratio', value: 'Infinity' },
          { port: 'metrics', key: 'bad', value: '-Infinity' },
        ],
      });
      expect(await client.call(req('add', { a: 0, b: 0 }))).toMatchObject({ $nonFinite: [{ port: 'sum', value: 'NaN' }, {}, {}] });
      expect(await client.call(req('add', { a: 1, b: 2 }))).toEqual({
        sum: 0.5,
        metrics: { ratio: 0.5, bad: -0.5, zero: 0, nested: { x: null } },
        list: [null],
      });
    } finally {
      client.close();
      await host.close();
    }
  });

  it('refuses a module that lacks a declared function or the declared panel', () => {
    const two = { ...manifest, functions: [...manifest.functions, { name: 'mul', inputs: [], outputs: [] }] };
    expect(() => createHost({ manifest: two, dir: '.', module: mod })).toThrow(
      'nodeset "tiny": the module exports no handler for "mul" (declared in its manifest)',
    );
    const withPanel = { ...manifest, panel: { fields: [{ name: 'episode' }], actions: [] } };
    expect(() => createHost({ manifest: withPanel, dir: '.', module: mod })).toThrow(
      'nodeset "tiny" declares a panel but its module exports no panel handler',
    );
  });
});
