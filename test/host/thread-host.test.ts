/**
 * A nodeset that declares `"inProcess": "thread"` (env_gridnav) gets each host in a worker
 * thread of the eval process: the same answers as its child-process host, its own module
 * instance, an abort that reaches the handler, and a `process.exit` in a handler (crash_at_step)
 * that ends that host only, read by its callers as a host that died.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallContext } from '../../src/core/types.js';
import { IN_PROCESS_ENV, hostMode, startHost, type RunHost } from '../../src/eval-process/in-process-host.js';
import { HostClient } from '../../src/host/host-client.js';
import { NodesetRegistry } from '../../src/nodeset-registry/registry.js';
import type { HostEntry } from '../../src/host/host-process.js';
import { loadManifest } from '../../src/nodeset-registry/manifest.js';

const ECHO_DIR = join(import.meta.dirname, '..', 'fixtures', 'nodesets', 'echo');

const ctx = (step: number, episodeKey = 'run:0'): CallContext => ({
  runSeed: 3,
  episodeIndex: 0,
  seed: 99,
  step,
  episodeKey,
  nodeId: 'env',
});

const started: Array<{ host: RunHost; client: HostClient }> = [];
afterEach(async () => {
  for (const { host, client } of started.splice(0)) {
    client.close();
    await host.stop();
  }
});

async function gridnav(): Promise<HostEntry> {
  const registry = await NodesetRegistry.scan();
  const e = registry.get('env_gridnav');
  return { name: e.name, dir: e.dir, manifest: e.manifest };
}

async function start(entry: HostEntry, env?: Record<string, string>): Promise<{ host: RunHost; client: HostClient }> {
  const host = await startHost({ entry, tag: '0', ...(env ? { env } : {}) });
  const s = { host, client: new HostClient(host.url) };
  started.push(s);
  return s;
}

/** Three steps of one episode: what an agent would see. */
async function play(client: HostClient, episodeKey: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [step, action] of [
    [0, undefined],
    [1, 'forward'],
    [2, 'turn_left'],
  ] as const) {
    out.push(await client.call({ function: 'step', inputs: action ? { action } : {}, config: {}, ctx: ctx(step, episodeKey) }));
  }
  return out;
}

describe('hosts in worker threads', () => {
  it('env_gridnav runs in a thread of this process and answers exactly as its child-process host does', async () => {
    const entry = await gridnav();
    expect(hostMode(entry, {})).toBe('thread');
    expect(hostMode(entry, { [IN_PROCESS_ENV]: '0' })).toBe('process');
    expect(hostMode(entry, { [IN_PROCESS_ENV]: 'env_gridnav' })).toBe('inline');

    const thread = await start(entry);
    expect(thread.host.inProcess).toBe(true);
    expect(thread.host.url).toMatch(/^inproc:\/\//);
    expect(await thread.client.health()).toMatchObject({ ok: true, nodeset: 'env_gridnav', tag: '0', pid: process.pid });
    const child = await start(entry, { [IN_PROCESS_ENV]: '0' });
    expect((await child.client.health()).pid).not.toBe(process.pid);
    expect(await play(thread.client, 'a')).toEqual(await play(child.client, 'a'));
  });

  it('an abort reaches the handler as a caller hanging up, and the host serves the next call', async () => {
    const { client } = await start(await gridnav());
    const ac = new AbortController();
    const slow = client.call({ function: 'step', inputs: {}, config: { step_latency_ms: 60_000 }, ctx: ctx(0, 'slow') }, ac.signal);
    setTimeout(() => ac.abort(new Error('stop waiting')), 50);
    await expect(slow).rejects.toThrow('stop waiting');
    expect(await client.call({ function: 'step', inputs: {}, config: {}, ctx: ctx(0, 'next') })).toHaveProperty('observation');
  });

  it('a burst of calls sent at once is answered in full, each with its own answer; one abandoned while queued leaves the rest alone', async () => {
    const { client } = await start(await gridnav());
    const call = (i: number, signal?: AbortSignal) =>
      client.call({ function: 'step', inputs: {}, config: {}, ctx: { ...ctx(0, `burst:${i}`), episodeIndex: i } }, signal);
    // The same calls one at a time, on another host: what each must answer.
    const { client: alone } = await start(await gridnav());
    const expected: unknown[] = [];
    for (let i = 0; i < 40; i++) {
      expected.push(await alone.call({ function: 'step', inputs: {}, config: {}, ctx: { ...ctx(0, `alone:${i}`), episodeIndex: i } }));
    }
    const gone = new AbortController();
    const burst = Array.from({ length: 40 }, (_, i) => call(i, i === 39 ? gone.signal : undefined));
    gone.abort(new Error('caller left'));
    const settled = await Promise.allSettled(burst);
    expect(settled[39]).toMatchObject({ status: 'rejected', reason: { message: 'caller left' } });
    for (let i = 0; i < 39; i++) expect(settled[i], `call ${i}`).toEqual({ status: 'fulfilled', value: expected[i] });
  });

  it('process.exit in a handler (crash_at_step) ends that host only: its call fails as to a dead host, this process lives on', async () => {
    const { host, client } = await start(await gridnav());
    await client.call({ function: 'step', inputs: {}, config: { crash_at_step: 1 }, ctx: ctx(0, 'crash') });
    await expect(
      client.call({ function: 'step', inputs: { action: 'forward' }, config: { crash_at_step: 1 }, ctx: ctx(1, 'crash') }),
    ).rejects.toMatchObject({ code: 'HOST_DIED' });
    expect(await host.exited).toEqual({ code: 1, signal: null });
    expect(host.alive).toBe(false);
    await expect(client.health()).rejects.toMatchObject({ code: 'HOST_DIED' });
  });

  it('an eviction is answered at once and reaches the thread before the next request', async () => {
    const manifest = await loadManifest(ECHO_DIR);
    const { client } = await start({ name: manifest.name, dir: ECHO_DIR, manifest: { ...manifest, inProcess: 'thread' } });
    const count = async (episodeKey: string) =>
      (await client.call({ function: 'count', inputs: {}, config: {}, ctx: ctx(0, episodeKey) })) as { count: number };
    await count('a');
    expect(await count('a')).toMatchObject({ count: 2 });
    await count('b');
    await client.evict('a');
    await client.evict('b');
    expect(await count('a')).toMatchObject({ count: 1 });
    expect(await count('b')).toMatchObject({ count: 1 });
  });

  it('stop() ends the thread; later calls fail as to a dead host', async () => {
    const { host, client } = await start(await gridnav());
    await host.stop();
    expect(host.alive).toBe(false);
    await expect(client.health()).rejects.toMatchObject({ code: 'HOST_DIED' });
  });
});
