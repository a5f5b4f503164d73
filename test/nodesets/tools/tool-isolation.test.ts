/**
 * Tool calls in a PID namespace of their own: a python call sees only its own processes, not
 * this one or its environment, and may write only its working directory; where no sandbox
 * works, code-running tools are refused unless the operator accepts running them bare; a key
 * a tool prints is redacted by fingerprint.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { fingerprintSecrets, SECRET_FINGERPRINTS_ENV } from '../../../src/core/secret-fingerprints.js';
import tools, { episodeWorkdirs, type ToolCallEvent, type ToolMessage } from '../../../src/nodesets/tools/handlers.js';
import { TOOL_ISOLATION_ENV } from '../../../src/nodesets/tools/tool-isolation.js';
import { ctxFor } from '../drive.js';

const saved = {
  PATH: process.env.PATH,
  [TOOL_ISOLATION_ENV]: process.env[TOOL_ISOLATION_ENV],
  [SECRET_FINGERPRINTS_ENV]: process.env[SECRET_FINGERPRINTS_ENV],
};
const bare = mkdtempSync(join(tmpdir(), 'tool-isolation-path-'));
let n = 0;

afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});
afterAll(() => {
  episodeWorkdirs.closeSync();
  rmSync(bare, { recursive: true, force: true });
});

const PROBE = [
  'import glob, os',
  'print(len(glob.glob("/proc/[0-9]*")))',
  `print(os.path.exists("/proc/${process.pid}/environ"))`,
  'open("mine.txt", "w").write("ok")',
  'try:',
  `    open(${JSON.stringify(join(tmpdir(), `outside-${process.pid}.txt`))}, "w")`,
  '    print("wrote outside")',
  'except OSError:',
  '    print("outside is read-only")',
].join('\n');

async function python(code: string, config: Record<string, unknown> = {}) {
  const episodeKey = `isolation:${n++}`;
  try {
    const out = await tools.functions!.run!({
      inputs: { tool_calls: [{ id: 'p', type: 'function', function: { name: 'python', arguments: JSON.stringify({ code }) } }] },
      config: { builtins: ['python', 'calculator'], ...config },
      ctx: ctxFor(1, { episodeKey, nodeId: 'tools' }),
    });
    return { result: (out.tool_results as ToolMessage[])[0]!, event: (out.$events as ToolCallEvent[])[0]! };
  } finally {
    tools.evict!(episodeKey);
  }
}

describe('tool isolation', () => {
  it.each(['bwrap', 'unshare'])('%s: a call sees only its own processes and writes only its working directory', async (kind) => {
    process.env[TOOL_ISOLATION_ENV] = kind;
    const { result } = await python(PROBE);
    const [count, seesUs, outside] = result.content.split('\n');
    expect(Number(count)).toBeLessThanOrEqual(3);
    expect(seesUs).toBe('False');
    expect(outside).toBe(kind === 'bwrap' ? 'outside is read-only' : 'wrote outside');
    rmSync(join(tmpdir(), `outside-${process.pid}.txt`), { force: true });
  });

  it('where no sandbox works, python is refused with a coded error; the fixed built-ins still run; "none" runs it bare', async () => {
    symlinkSync('/usr/bin/python3', join(bare, 'python3'));
    process.env.PATH = bare;
    await expect(python('print(1)')).rejects.toThrow(
      /^TOOL_ISOLATION_UNAVAILABLE: tool python runs code of the model's choosing.*EVAL_TOOL_ISOLATION=none/,
    );
    const episodeKey = `isolation:${n++}`;
    const calc = await tools.functions!.run!({
      inputs: { tool_calls: [{ id: 'c', type: 'function', function: { name: 'calculator', arguments: '{"expression":"6*7"}' } }] },
      config: { builtins: ['python', 'calculator'] },
      ctx: ctxFor(1, { episodeKey, nodeId: 'tools' }),
    });
    tools.evict!(episodeKey);
    expect((calc.tool_results as ToolMessage[])[0]!.content).toBe('42');
    process.env[TOOL_ISOLATION_ENV] = 'none';
    const { result } = await python(PROBE);
    expect(result.content.split('\n')[1]).toBe('True');
  });

  it('a key a tool prints is redacted in its result and its event', async () => {
    const key = 'sk-tool-visible-key-0123456789';
    process.env[SECRET_FINGERPRINTS_ENV] = fingerprintSecrets([key]);
    const { result, event } = await python(
      `import sys\nprint("k=" + ${JSON.stringify(key.slice(0, 9))} + ${JSON.stringify(key.slice(9))})\nsys.stderr.write(${JSON.stringify(key.slice(0, 4))} + ${JSON.stringify(key.slice(4))})`,
    );
    expect(result.content).toBe('k=[redacted]');
    expect(event).toMatchObject({ stdout: 'k=[redacted]', stderr: '[redacted]' });
  });
});
