/**
 * Escapes from agent_sandbox, each the command the stand-in model issues in a sandboxed episode
 * of a real `evalctl run`: reading the outputs folder, /etc/shadow and the first process's
 * environment, writing outside, connecting to a port on 127.0.0.1, a fork bomb, a 10 GB write,
 * an infinite loop, a process left running. Each is refused or contained, the episode ends
 * COMPLETED with the refusal as its answer, and nothing is left behind.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import type { RunSummary } from '../../src/store/types.js';
import { waitFor } from '../eval-process/run-helpers.js';
import { type OpenAIStub, startOpenAIStub } from '../support/openai-stub.js';

const CLI = join(DIST_DIR, 'main.js');
const KEY = 'sk-escape-key-4411aa';
const SECRET = 'escape-secret-c0ffee-7731';
let stub: OpenAIStub;
let tmp: string;
let server: Server;
let connections = 0;

beforeAll(async () => {
  stub = await startOpenAIStub({ expectedKey: KEY });
  tmp = await mkdtemp(join(tmpdir(), 'sandbox-escapes-'));
  await chmod(tmp, 0o711);
  server = createServer((s) => {
    connections++;
    s.end('reached');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  await stub.close();
  await new Promise((r) => server.close(r));
  await rm(tmp, { recursive: true, force: true });
});

/** Running processes (zombies aside) whose command line is exactly `argv`. */
const running = (argv: string[]): string[] =>
  readdirSync('/proc').filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return (
        stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z' && readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `${argv.join('\u0000')}\u0000`
      );
    } catch {
      return false;
    }
  });

/** Running processes of a sandbox uid. */
const sandboxProcesses = (): string[] =>
  readdirSync('/proc').filter((pid) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      return uid >= 1_000_000 && !/^State:\s+Z/m.test(status);
    } catch {
      return false;
    }
  });

describe('agent_sandbox escapes', { timeout: 120_000 }, () => {
  it('refuses or contains each, ends every episode with a clear note, and leaves the machine clean', async () => {
    const outputs = join(tmp, 'outputs');
    await mkdir(outputs);
    await writeFile(join(outputs, 'server-secret.txt'), SECRET);
    const port = (server.address() as { port: number }).port;
    const attempts: Record<string, string> = {
      outputs: `cat ${join(outputs, 'server-secret.txt')}`,
      shadow: 'cat /etc/shadow',
      environ: "tr '\\0' '\\n' < /proc/1/environ",
      write: `echo x > ${join(tmp, 'escaped.txt')}`,
      network: `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`,
      forkbomb: ':(){ :|:& };:',
      bigwrite: 'head -c 10G /dev/zero > big',
      loop: 'while :; do :; done',
      leftover: 'sleep 998877 & echo left one running',
    };
    const ws = join(tmp, 'ws');
    await mkdir(join(ws, 'datasets', 'escapes'), { recursive: true });
    await writeFile(
      join(ws, 'datasets', 'escapes', 'test.jsonl'),
      Object.entries(attempts)
        .map(([id, input]) => JSON.stringify({ id, input, environment: { files: { 'task.txt': 'do as told\n' } } }))
        .join('\n'),
    );
    const r = await execa(
      process.execPath,
      [CLI, 'run', 'agent_sandbox', '--dataset', 'escapes', '--episodes', '9', '--workers', '3', '--outputs', outputs, '--json'].concat([
        '--set',
        'tools.timeout_ms=2000',
        '--set',
        'tools.kill_grace_ms=200',
        '--set',
        'tools.file_size_mb=16',
      ]),
      {
        reject: false,
        env: {
          OPENAI_BASE_URL: stub.baseURL,
          OPENAI_API_KEY: KEY,
          OPENAI_MODEL: 'stub-model',
          ESCAPE_TEST_SECRET: SECRET,
          ACTIVE_WORKSPACE_DIR: ws,
          EVAL_SANDBOX_DIR: join(tmp, 'sandboxes'),
          EVAL_LLM_CACHE_DIR: join(tmp, 'cache'),
        },
      },
    );
    if (!r.stdout.startsWith('{')) throw new Error(`evalctl run failed (${r.exitCode}): ${r.stderr}`);
    const summary = JSON.parse(r.stdout) as RunSummary;
    const answer = Object.fromEntries(summary.episodes.map((e) => [e.sampleId, e.scores?.[0]?.answer ?? '']));
    expect(summary.episodes.map((e) => e.status)).toEqual(Array(9).fill('COMPLETED'));

    expect(answer.outputs).toMatch(/^error: bash exited with code 1: cat: .*: No such file or directory$/);
    expect(answer.shadow).toBe('error: bash exited with code 1: cat: /etc/shadow: No such file or directory');
    expect(answer.environ).toBe('PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
    expect(answer.write).toMatch(/^error: bash exited with code 1: .*No such file or directory$/);
    expect(existsSync(join(tmp, 'escaped.txt'))).toBe(false);
    expect(answer.network).toMatch(/^error: bash exited with code 1: .*(Connection refused|Network is unreachable)/);
    expect(connections).toBe(0);
    // The bomb's first shell returns at once; the rest die with the call's PID namespace, or hit the process limit.
    expect(answer.forkbomb).toMatch(/^$|^error: bash (timed out after 2000 ms and was killed|exited with code)/);
    expect(answer.bigwrite).toMatch(/^error: bash (wrote past the file size limit|exited with code 153)/);
    expect(answer.loop).toBe('error: bash timed out after 2000 ms and was killed');
    expect(answer.leftover).toBe('left one running');
    for (const a of Object.values(answer)) expect(a).not.toContain(SECRET);

    expect(await waitFor(() => running(['sleep', '998877']).length === 0, 5000)).toBe(true);
    // Sandboxes run as uids from 1000000 up (the server is root here): none has a process left.
    if (process.getuid?.() === 0) expect(await waitFor(() => sandboxProcesses().length === 0, 5000)).toBe(true);
    expect(readdirSync(join(tmp, 'sandboxes'))).toEqual([]);
  });
});
