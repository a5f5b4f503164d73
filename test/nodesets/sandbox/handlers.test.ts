/**
 * The sandbox nodeset's tools against escapes: each attempt runs as a model's tool call in an
 * episode's bubblewrap sandbox and is refused or contained with a clear note, and once the
 * episode is evicted nothing of it is left (no process, no directory).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sandbox, { sandboxPool } from '../../../src/nodesets/sandbox/handlers.js';
import type { ToolCallEvent, ToolMessage } from '../../../src/nodesets/tools/handlers.js';
import { waitFor } from '../../eval-process/run-helpers.js';
import { ctxFor } from '../drive.js';

const SECRET = 'sandbox-secret-5f1c0a9e77';
let tmp: string;
let server: Server;
let port: number;
let connections = 0;
const saved = process.env.OPENAI_API_KEY;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'sandbox-handlers-'));
  // A sandbox's own uid must reach its folder.
  await chmod(tmp, 0o711);
  process.env.EVAL_SANDBOX_DIR = join(tmp, 'sandboxes');
  await writeFile(join(tmp, 'outputs-secret.txt'), SECRET);
  process.env.OPENAI_API_KEY = SECRET;
  server = createServer((s) => {
    connections++;
    s.end('hello');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  delete process.env.EVAL_SANDBOX_DIR;
  if (saved === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = saved;
  await new Promise((r) => server.close(r));
  await rm(tmp, { recursive: true, force: true });
  sandboxPool.closeSync();
});

let n = 0;
async function bash(key: string, command: string, config: Record<string, unknown> = {}) {
  const out = await sandbox.functions!.tools!({
    inputs: { tool_calls: [{ id: `c${n++}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }] },
    config,
    ctx: ctxFor(1, { episodeKey: key, nodeId: 'tools' }),
  });
  return { result: (out.tool_results as ToolMessage[])[0]!.content, event: (out.$events as ToolCallEvent[])[0]! };
}

/** Running processes whose command line contains `needle`. */
const running = (needle: string): number[] =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z' && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);

describe('sandbox tools', { timeout: 60_000 }, () => {
  it('refuse or contain every escape, and leave nothing behind', async () => {
    const key = 'sbtest:escapes';
    const env = { environment: { files: { 'notes/hello.txt': 'hi there\n' } } };

    expect((await bash(key, 'cat notes/hello.txt; pwd', env)).result).toBe('hi there\n/workspace');
    const dir = sandboxPool.get(key)!.dir;

    const outside = await bash(key, `cat ${join(tmp, 'outputs-secret.txt')}`);
    expect(outside.result).toMatch(/^error: bash exited with code 1: .*No such file or directory/);
    expect((await bash(key, 'cat /etc/shadow')).result).toMatch(/No such file or directory/);
    const environ = await bash(key, "tr '\\0' '\\n' < /proc/1/environ; env");
    expect(environ.result).not.toContain(SECRET);
    expect(environ.result).not.toMatch(/OPENAI|API_KEY/);

    expect((await bash(key, 'echo x > /usr/escape; echo x > /escape')).result).toMatch(/Read-only file system/);
    expect((await bash(key, `echo x > ${join(tmp, 'escape')}`)).result).toMatch(/^error:/);
    expect(existsSync(join(tmp, 'escape'))).toBe(false);

    const net = await bash(key, `exec 3<>/dev/tcp/127.0.0.1/${port}; cat <&3`);
    expect(net.result).toMatch(/^error: .*(Connection refused|Network is unreachable)/);
    expect(connections).toBe(0);

    const bomb = await bash(key, ':(){ :|:& };:; echo survived', { timeout_ms: 3000, max_procs: 32 });
    // The call ends within its limit whatever the bomb did (forks refused at the process limit, killed at the time
    // limit, or left in the background and killed with the call); the check below finds none of its processes left.
    expect(bomb.event.duration_ms, JSON.stringify({ ...bomb.event, stderr: bomb.event.stderr.slice(0, 300) })).toBeLessThan(3000 + 2000);
    expect(await waitFor(() => running(':(){ :|:& };:').length === 0, 5000)).toBe(true);

    const big = await bash(key, 'head -c 10G /dev/zero > big; echo rc=$?', { file_size_mb: 8 });
    expect(big.result).toMatch(/rc=153|file size/i);
    expect(readFileSync(join(dir, 'big')).length).toBeLessThanOrEqual(8 * 1024 * 1024);

    const loop = await bash(key, 'while :; do :; done', { timeout_ms: 500, kill_grace_ms: 200 });
    expect(loop.result).toBe('error: bash timed out after 500 ms and was killed');

    // A process left running in the background dies with its call: the sandbox's PID namespace goes with it.
    await bash(key, 'nohup sleep 1234567 >/dev/null 2>&1 & echo started');
    expect(await waitFor(() => running('sleep\u00001234567').length === 0, 5000)).toBe(true);

    const py = await sandbox.functions!.tools!({
      inputs: {
        tool_calls: [
          {
            id: 'w',
            type: 'function',
            function: { name: 'write_file', arguments: JSON.stringify({ path: 'a/b.txt', content: 'written' }) },
          },
          { id: 'r', type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: 'a/b.txt' }) } },
          { id: 'l', type: 'function', function: { name: 'list_dir', arguments: '{}' } },
          { id: 'p', type: 'function', function: { name: 'python', arguments: JSON.stringify({ code: 'print(6*7)' }) } },
          { id: 'x', type: 'function', function: { name: 'nope', arguments: '{}' } },
        ],
      },
      config: {},
      ctx: ctxFor(1, { episodeKey: key, nodeId: 'tools' }),
    });
    expect((py.tool_results as ToolMessage[]).map((m) => m.content)).toEqual([
      '',
      'written',
      'a/\nbig\nnotes/',
      '42',
      'error: unknown tool "nope" (available: bash, python, read_file, write_file, list_dir)',
    ]);

    sandbox.evict!(key);
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(sandboxPool.root)).toEqual([]);
  });

  it('checks the task: pass and fail with the check output as explanation', async () => {
    const sample = {
      metadata: {
        environment: { files: { 'n.txt': '41' }, check: 'test "$(cat n.txt)" = 42 || { echo "n.txt holds $(cat n.txt)"; exit 1; }' },
      },
    };
    const key = 'sbtest:check';
    const before = await sandbox.functions!.check!({
      inputs: { answer: 'done', sample },
      config: {},
      ctx: ctxFor(2, { episodeKey: key, nodeId: 'check' }),
    });
    expect(before.score).toMatchObject({ value: 0, explanation: 'check failed: check exited with code 1: n.txt holds 41' });
    await sandbox.functions!.tools!({
      inputs: {
        sample,
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'bash', arguments: '{"command":"echo 42 > n.txt"}' } }],
      },
      config: {},
      ctx: ctxFor(3, { episodeKey: key, nodeId: 'tools' }),
    });
    const after = await sandbox.functions!.check!({
      inputs: { answer: 'done', sample },
      config: {},
      ctx: ctxFor(4, { episodeKey: key, nodeId: 'check' }),
    });
    expect(after).toMatchObject({ score: { value: 1 }, metrics: { score: 1, correct: 1, tool_calls: 1, tool_errors: 0 }, done: true });
    sandbox.evict!(key);
  });

  it('ends the episode when the task setup fails, with its output', async () => {
    await expect(bash('sbtest:setup', 'true', { environment: { setup: 'echo no database >&2; exit 3' } })).rejects.toThrow(
      'SANDBOX_SETUP_FAILED: setup exited with code 3: no database',
    );
    sandbox.evict!('sbtest:setup');
  });

  it('refuses provider none unless the run accepts it', async () => {
    await expect(bash('sbtest:none', 'true', { provider: 'none' })).rejects.toThrow(/SANDBOX_UNAVAILABLE: .*allow_unsandboxed/);
    expect((await bash('sbtest:none', 'echo $HOME', { provider: 'none', allow_unsandboxed: true })).result).toBe(
      sandboxPool.get('sbtest:none')!.dir,
    );
    sandbox.evict!('sbtest:none');
  });
});
