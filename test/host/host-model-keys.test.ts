/**
 * Model keys reach only a host whose manifest says `modelKeys`, and never through its
 * environment: a child process reads them from its own pipe, a thread host from its start data.
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallContext } from '../../src/core/types.js';
import { HostClient } from '../../src/host/host-client.js';
import { spawnHost, type HostEntry, type HostProcess } from '../../src/host/host-process.js';
import { startThreadHost } from '../../src/host/thread-host.js';
import { loadManifest } from '../../src/nodeset-registry/manifest.js';
import { DIST_DIR } from '../../src/paths.js';

const KEY = 'sk-host-probe-0123456789abcdef';
const ctx: CallContext = { runSeed: 1, episodeIndex: 0, seed: 1, step: 0, episodeKey: 'r:0', nodeId: 'n' } as CallContext;
let tmp: string;
const hosts: HostProcess[] = [];
const saved = process.env.PROBE_API_KEY;

async function nodeset(name: string, modelKeys: boolean): Promise<HostEntry> {
  const dir = join(tmp, name);
  await mkdir(dir, { recursive: true });
  const keys = pathToFileURL(join(DIST_DIR, 'core', 'model-keys.js')).href;
  await writeFile(
    join(dir, 'handlers.mjs'),
    `import { modelKey } from ${JSON.stringify(keys)};\nexport default { functions: { probe: () => ({ key: modelKey('PROBE_API_KEY') ?? null, inEnv: process.env.PROBE_API_KEY ?? null }) } };\n`,
  );
  await writeFile(
    join(dir, 'manifest.json'),
    JSON.stringify({
      name,
      parallelism: 'shared',
      module: './handlers.mjs',
      ...(modelKeys ? { modelKeys: true } : {}),
      functions: [{ name: 'probe', inputs: [], outputs: [{ name: 'key' }, { name: 'inEnv' }] }],
    }),
  );
  return { name, dir, manifest: await loadManifest(dir) };
}

async function probe(h: HostProcess): Promise<unknown> {
  hosts.push(h);
  const client = new HostClient(h.url);
  try {
    return await client.call({ function: 'probe', inputs: {}, config: {}, ctx });
  } finally {
    client.close();
  }
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'host-model-keys-'));
  process.env.PROBE_API_KEY = KEY;
});
afterAll(async () => {
  await Promise.allSettled(hosts.map((h) => h.stop()));
  if (saved === undefined) delete process.env.PROBE_API_KEY;
  else process.env.PROBE_API_KEY = saved;
  await rm(tmp, { recursive: true, force: true });
});

describe('model keys and hosts', () => {
  it('a child-process host that calls a model reads the keys from its pipe; its environment holds none', async () => {
    const h = await spawnHost({ entry: await nodeset('keyed', true) });
    expect(await probe(h)).toEqual({ key: KEY, inEnv: null });
    expect(readFileSync(`/proc/${h.pid}/environ`, 'latin1')).not.toContain(KEY);
  });

  it('any other host gets no key at all', async () => {
    const h = await spawnHost({ entry: await nodeset('plain', false) });
    expect(await probe(h)).toEqual({ key: null, inEnv: null });
    expect(readFileSync(`/proc/${h.pid}/environ`, 'latin1')).not.toContain(KEY);
  });

  it('a thread host that calls a model gets the keys in memory, not in its environment', async () => {
    expect(await probe(await startThreadHost({ entry: await nodeset('threaded', true) }))).toEqual({ key: KEY, inEnv: null });
    expect(await probe(await startThreadHost({ entry: await nodeset('threaded_plain', false) }))).toEqual({ key: null, inEnv: null });
  });
});
