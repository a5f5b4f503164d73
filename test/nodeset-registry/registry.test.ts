import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnHost, type HostProcess } from '../../src/host/host-process.js';
import { NodesetRegistry } from '../../src/nodeset-registry/registry.js';
import type { CallContext, NodeCallArgs } from '../../src/core/types.js';

const ECHO_DIR = join(import.meta.dirname, '..', 'fixtures', 'nodesets', 'echo');

const ctx: CallContext = { runSeed: 1, episodeIndex: 0, seed: 99, step: 3, episodeKey: 'r:0', nodeId: 'e' };
const args = (x: unknown): NodeCallArgs => ({ inputs: { x }, config: {}, ctx });

describe('NodesetRegistry', () => {
  let tmp: string;
  let builtinDir: string;
  let workspaceDir: string;
  const hosts: HostProcess[] = [];
  const registries: NodesetRegistry[] = [];

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'registry-'));
    builtinDir = join(tmp, 'builtin');
    workspaceDir = join(tmp, 'workspace');
    await cp(ECHO_DIR, join(builtinDir, 'echo'), { recursive: true });
    await mkdir(join(builtinDir, 'not_a_nodeset'), { recursive: true });
    const other = {
      name: 'other',
      parallelism: 'shared',
      module: 'x.js',
      functions: [{ name: 'f', inputs: [], outputs: [{ name: 'y' }] }],
    };
    await mkdir(join(builtinDir, 'other'));
    await writeFile(join(builtinDir, 'other', 'manifest.json'), JSON.stringify(other));
  });
  afterEach(async () => {
    for (const r of registries.splice(0)) r.close();
    await Promise.all(hosts.splice(0).map((h) => h.stop()));
    await rm(tmp, { recursive: true, force: true });
  });

  async function scan(withWorkspace = false): Promise<NodesetRegistry> {
    const r = await NodesetRegistry.scan({ builtinDir, workspaceDir: withWorkspace ? workspaceDir : join(tmp, 'none') });
    registries.push(r);
    return r;
  }

  it('scans built-in nodesets, skipping folders without a manifest', async () => {
    const r = await scan();
    expect(r.list().map((e) => [e.name, e.source])).toEqual([
      ['echo', 'builtin'],
      ['other', 'builtin'],
    ]);
    expect(r.get('echo').dir).toBe(join(builtinDir, 'echo'));
    expect(() => r.get('missing')).toThrow('nodeset "missing" not found (known: echo, other)');
    expect(r.knownTypes()).toEqual([
      'echo__count',
      'echo__double',
      'echo__echo',
      'echo__fail',
      'echo__lastAbort',
      'echo__sleep',
      'other__f',
    ]);
  });

  it('the workspace overlay (graph_nodes/) wins over a built-in of the same name', async () => {
    const wsEcho = join(workspaceDir, 'graph_nodes', 'my_echo');
    await cp(ECHO_DIR, wsEcho, { recursive: true });
    const manifest = JSON.parse(await readFile(join(wsEcho, 'manifest.json'), 'utf8')) as { description: string; functions: unknown[] };
    manifest.description = 'workspace edition';
    manifest.functions.push({ name: 'extra', inputs: [], outputs: [] });
    await writeFile(join(wsEcho, 'manifest.json'), JSON.stringify(manifest));

    const r = await scan(true);
    const echo = r.get('echo');
    expect(echo).toMatchObject({ source: 'workspace', dir: wsEcho });
    expect(echo.manifest.description).toBe('workspace edition');
    expect(r.resolve('echo__extra')?.fn.name).toBe('extra');
    expect(r.get('other').source).toBe('builtin');
  });

  it('uses ACTIVE_WORKSPACE_DIR when no workspace is given', async () => {
    const wsOnly = join(workspaceDir, 'graph_nodes', 'wsonly');
    await mkdir(wsOnly, { recursive: true });
    await writeFile(
      join(wsOnly, 'manifest.json'),
      JSON.stringify({ name: 'wsonly', parallelism: 'shared', module: 'm.js', functions: [{ name: 'f', inputs: [], outputs: [] }] }),
    );
    const saved = process.env.ACTIVE_WORKSPACE_DIR;
    process.env.ACTIVE_WORKSPACE_DIR = workspaceDir;
    try {
      const r = await NodesetRegistry.scan({ builtinDir });
      registries.push(r);
      expect(r.get('wsonly').source).toBe('workspace');
    } finally {
      if (saved === undefined) delete process.env.ACTIVE_WORKSPACE_DIR;
      else process.env.ACTIVE_WORKSPACE_DIR = saved;
    }
  });

  it('a broken manifest stops the scan with its file and field', async () => {
    await mkdir(join(builtinDir, 'broken'));
    await writeFile(join(builtinDir, 'broken', 'manifest.json'), JSON.stringify({ name: 'broken', parallelism: 'shared', functions: [] }));
    await expect(scan()).rejects.toThrow(/broken\/manifest\.json: functions: .*; module: exactly one of/);
  });

  it('resolves <nodeset>__<function>; unknown nodesets, functions and built-in types are not resolved here', async () => {
    const r = await scan();
    const t = r.resolve('echo__echo');
    expect(t).toMatchObject({ type: 'echo__echo', nodeset: 'echo', fn: { name: 'echo' } });
    expect(r.resolve('echo__nope')).toBeUndefined();
    expect(r.resolve('nope__echo')).toBeUndefined();
    expect(r.resolve('graphOut')).toBeUndefined();
  });

  it('a nodeset with no host and no local module is "not hosted", naming it', async () => {
    const r = await scan();
    await expect(r.resolve('echo__echo')!.invoke(args(1))).rejects.toThrow(/nodeset "echo" is not hosted/);
  });

  it('useLocal runs the module in this process', async () => {
    const r = await scan();
    await r.useLocal('echo');
    expect(await r.resolve('echo__echo')!.invoke(args('here'))).toMatchObject({ x: 'here', seed: 99, step: 3, pid: process.pid });
    expect(await r.resolve('echo__double')!.invoke(args(21))).toEqual({ y: 42, batchSize: 1 });
    await expect(r.resolve('echo__fail')!.invoke({ ...args(0), inputs: { why: 'local' } })).rejects.toThrow('boom: local');
  });

  it('registers a remote nodeset by URL (fetching its manifest) and routes: no override → registered URL, override → that host', async () => {
    const entry = { name: 'echo', dir: ECHO_DIR, manifest: (await scan()).get('echo').manifest };
    const [shared, w0, w1] = await Promise.all([
      spawnHost({ entry, tag: 'shared' }),
      spawnHost({ entry, tag: '0' }),
      spawnHost({ entry, tag: '1' }),
    ]);
    hosts.push(shared, w0, w1);

    // A process that knows nothing from disk borrows the host by URL.
    const r = new NodesetRegistry();
    registries.push(r);
    const remote = await r.registerRemote('echo', shared.url);
    expect(remote).toMatchObject({ name: 'echo', source: 'remote', url: shared.url });
    expect(remote.manifest.functions.map((f) => f.name)).toEqual(['echo', 'fail', 'count', 'sleep', 'lastAbort', 'double']);

    const echo = r.resolve('echo__echo')!;
    expect((await echo.invoke(args('a'))).tag).toBe('shared');
    expect((await echo.invoke(args('b'), w1.url)).tag).toBe('1');
    expect((await echo.invoke(args('c'), w0.url)).tag).toBe('0');
    expect((await echo.invoke(args('d'))).tag).toBe('shared');
    await expect(r.resolve('echo__fail')!.invoke({ ...args(0), inputs: { why: 'remote' } })).rejects.toMatchObject({
      code: 'HOST_ERROR',
      message: 'boom: remote',
    });

    await expect(r.registerRemote('other', shared.url)).rejects.toThrow(`the host at ${shared.url} serves nodeset "echo", not "other"`);
  });

  it('attachUrl routes calls to a host the caller spawned; a host that dies is HOST_DIED', async () => {
    const r = await scan();
    const h = await spawnHost({ entry: r.get('echo'), tag: 'mine' });
    hosts.push(h);
    r.attachUrl('echo', h.url);
    expect(r.get('echo').url).toBe(h.url);
    const echo = r.resolve('echo__echo')!;
    expect((await echo.invoke(args(1))).tag).toBe('mine');
    await h.stop();
    await expect(echo.invoke(args(2))).rejects.toMatchObject({ code: 'HOST_DIED' });
  });
});
