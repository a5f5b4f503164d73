import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifest } from '../../src/nodeset-registry/manifest.js';

const ECHO_DIR = join(import.meta.dirname, '..', 'fixtures', 'nodesets', 'echo');

const base = {
  name: 'env_demo',
  parallelism: 'replicated',
  module: 'index.js',
  functions: [{ name: 'step', inputs: [{ name: 'action', optional: true }], outputs: [{ name: 'observation' }] }],
};

describe('loadManifest', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'manifest-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function write(m: unknown): Promise<string> {
    const d = join(dir, 'ns');
    await mkdir(d, { recursive: true });
    await writeFile(join(d, 'manifest.json'), typeof m === 'string' ? m : JSON.stringify(m));
    return d;
  }

  it('reads a valid manifest with its panel, batching and resources', async () => {
    const m = await loadManifest(ECHO_DIR);
    expect(m.name).toBe('echo');
    expect(m.parallelism).toBe('replicated');
    expect(m.functions.map((f) => f.name)).toEqual(['echo', 'fail', 'count', 'sleep', 'lastAbort', 'double']);
    expect(m.functions.find((f) => f.name === 'double')?.batched).toBe(true);
    expect(m.panel?.fields.map((f) => f.name)).toEqual(['dataset', 'split', 'episode']);
    expect(m.batching?.maxBatchSize).toBe(8);
    expect(m.resources?.ramMb).toBe(50);
  });

  it('keeps fields it does not know (forward compatible)', async () => {
    const m = await loadManifest(await write({ ...base, category: 'env' }));
    expect((m as unknown as Record<string, unknown>).category).toBe('env');
  });

  it('names the file and the field of a bad value', async () => {
    const d = await write({ ...base, parallelism: 'sometimes' });
    await expect(loadManifest(d)).rejects.toThrow(new RegExp(`${join(d, 'manifest.json')}.*parallelism`));
    await expect(loadManifest(d)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('names the nested path of a bad port', async () => {
    const d = await write({ ...base, functions: [{ name: 'step', inputs: [{}], outputs: [] }] });
    await expect(loadManifest(d)).rejects.toThrow(/functions\[0\]\.inputs\[0\]\.name/);
  });

  it('reads declared metric ranges and names a range whose min is above its max', async () => {
    const port = (metrics: unknown) => ({ ...base, functions: [{ name: 'step', inputs: [], outputs: [{ name: 'metrics', metrics }] }] });
    const m = await loadManifest(await write(port({ spl: { min: 0, max: 1 }, steps: { min: 0 } })));
    expect(m.functions[0]!.outputs[0]!.metrics).toEqual({ spl: { min: 0, max: 1 }, steps: { min: 0 } });
    const d = await write(port({ spl: { min: 1, max: 0 } }));
    await expect(loadManifest(d)).rejects.toThrow(/functions\[0\]\.outputs\[0\]\.metrics\.spl.*min must be at most max/);
    await expect(loadManifest(await write(port({ spl: { min: '0' } })))).rejects.toThrow(/metrics\.spl\.min/);
  });

  it('requires exactly one of module or command', async () => {
    const { module: _m, ...neither } = base;
    await expect(loadManifest(await write(neither))).rejects.toThrow(/exactly one of "module".*"command"/);
    await expect(loadManifest(await write({ ...base, command: ['python3', 'host.py'] }))).rejects.toThrow(/exactly one of/);
    const cmd = await loadManifest(await write({ ...neither, command: ['python3', 'host.py'] }));
    expect(cmd.command).toEqual(['python3', 'host.py']);
  });

  it('takes inlineUnless only with config keys a function declares, on a JS-module nodeset', async () => {
    const functions = [{ ...base.functions[0], config: { step_compute_ms: { default: 0 } } }];
    const m = await loadManifest(await write({ ...base, functions, inProcess: 'thread', inlineUnless: ['step_compute_ms'] }));
    expect(m.inlineUnless).toEqual(['step_compute_ms']);
    await expect(loadManifest(await write({ ...base, functions, inlineUnless: ['step_compute'] }))).rejects.toThrow(
      /inlineUnless\[0\]: "step_compute" is not a config key of any function \(declared: step_compute_ms\)/,
    );
    const { module: _m, ...command } = base;
    await expect(
      loadManifest(await write({ ...command, functions, command: ['python3', 'host.py'], inlineUnless: ['step_compute_ms'] })),
    ).rejects.toThrow(/inlineUnless: only a JS-module nodeset/);
  });

  it('takes heavyWith on the same terms', async () => {
    const functions = [{ ...base.functions[0], config: { step_compute_ms: { default: 0 } } }];
    const m = await loadManifest(await write({ ...base, functions, heavyWith: ['step_compute_ms'] }));
    expect(m.heavyWith).toEqual(['step_compute_ms']);
    await expect(loadManifest(await write({ ...base, functions, heavyWith: ['compute'] }))).rejects.toThrow(
      /heavyWith\[0\]: "compute" is not a config key of any function/,
    );
    const { module: _m, ...command } = base;
    await expect(
      loadManifest(await write({ ...command, functions, command: ['python3', 'host.py'], heavyWith: ['step_compute_ms'] })),
    ).rejects.toThrow(/heavyWith: only a JS-module nodeset/);
  });

  it('refuses names that would break node types and tags', async () => {
    await expect(loadManifest(await write({ ...base, name: 'env__demo' }))).rejects.toThrow(/name.*no "__"/);
    await expect(loadManifest(await write({ ...base, name: 'env#1' }))).rejects.toThrow(/name/);
  });

  it('refuses duplicate functions and ports', async () => {
    const fn = base.functions[0]!;
    await expect(loadManifest(await write({ ...base, functions: [fn, fn] }))).rejects.toThrow(
      /functions\[1\]\.name: duplicate function "step"/,
    );
    const dupPorts = { ...fn, outputs: [{ name: 'a' }, { name: 'a' }] };
    await expect(loadManifest(await write({ ...base, functions: [dupPorts] }))).rejects.toThrow(/duplicate port "a"/);
  });

  it('refuses a panel field that depends on a later or unknown field', async () => {
    const panel = { fields: [{ name: 'split', dependsOn: ['dataset'] }, { name: 'dataset' }], actions: ['play'] };
    await expect(loadManifest(await write({ ...base, panel }))).rejects.toThrow(
      /panel\.fields\[0\]\.dependsOn\[0\]: "dataset" is not a field declared before "split"/,
    );
  });

  it('reports invalid JSON and a missing file with the path', async () => {
    const d = await write('{ "name": ');
    await expect(loadManifest(d)).rejects.toThrow(/manifest\.json is not valid JSON/);
    await expect(loadManifest(join(dir, 'absent'))).rejects.toThrow(/cannot read nodeset manifest .*absent.*manifest\.json/);
  });
});
