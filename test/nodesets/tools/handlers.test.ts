import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import tools, { episodeWorkdirs, type ToolCall, type ToolCallEvent, type ToolMessage } from '../../../src/nodesets/tools/handlers.js';
import { BUILTIN_TOOLS, openAiTools, toolSet } from '../../../src/nodesets/tools/tool-set.js';
import { workdirName } from '../../../src/nodesets/tools/episode-workdirs.js';
import { ctxFor } from '../drive.js';

let nextKey = 0;
const key = (): string => `toolstest:${nextKey++}`;

const call = (id: string, name: string, args: unknown): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
});

async function runTools(episodeKey: string, calls: ToolCall[], config: Record<string, unknown> = {}, signal?: AbortSignal) {
  const out = await tools.functions!.run!({
    inputs: { tool_calls: calls },
    config,
    ctx: ctxFor(1, { episodeKey, nodeId: 'tools' }),
    ...(signal ? { signal } : {}),
  });
  return { results: out.tool_results as ToolMessage[], events: out.$events as ToolCallEvent[] };
}

const dirOf = (episodeKey: string): string => join(episodeWorkdirs.root, workdirName(episodeKey));

/** Whether a process still runs (a zombie waiting for its reaper does not). */
const running = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

/** Running processes (zombies aside) whose NUL-separated command line contains `needle`. */
const processesRunning = (needle: string): number[] =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle) && running(pid);
      } catch {
        return false;
      }
    });

const LINGER = '61.2345';

afterAll(() => episodeWorkdirs.closeSync());

describe('tools run', () => {
  it('answers each call with a tool message in order and a tool_call event each', async () => {
    const k = key();
    const { results, events } = await runTools(k, [
      call('a', 'calculator', { expression: '(17 + 25) * 3' }),
      call('b', 'calculator', { expression: '2 ^ 10 / 4' }),
      call('c', 'calculator', { expression: '1 / 0' }),
    ]);
    expect(results).toEqual([
      { role: 'tool', tool_call_id: 'a', content: '126' },
      { role: 'tool', tool_call_id: 'b', content: '256' },
      { role: 'tool', tool_call_id: 'c', content: 'error: calculator exited with code 1: division by zero' },
    ]);
    expect(events[0]).toMatchObject({
      type: 'tool_call',
      tool_call_id: 'a',
      name: 'calculator',
      arguments: '{"expression":"(17 + 25) * 3"}',
      exit_code: 0,
      stdout: '126',
      stderr: '',
      timed_out: false,
    });
    expect(events[0]!.duration_ms).toBeGreaterThanOrEqual(0);
    expect(events[2]).toMatchObject({ exit_code: 1, stderr: 'division by zero', error: 'calculator exited with code 1: division by zero' });
    tools.evict!(k);
  });

  it('outputs nothing when the turn asked for no tools', async () => {
    const out = await tools.functions!.run!({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: key() }) });
    expect(out).toEqual({});
  });

  it('a call past its time limit answers with an error, kills what it started, and the next call still runs', async () => {
    const k = key();
    const config = {
      timeout_ms: 300,
      kill_grace_ms: 200,
      // A distinctive duration: the background child is found by its command line (inside a PID namespace $! is not a pid here).
      tools: { hang: { command: ['sh', '-c', `sleep ${LINGER} & echo started > child.txt; wait`], description: 'never ends' } },
    };
    const { results, events } = await runTools(k, [call('h', 'hang', {})], config);
    expect(results[0]).toEqual({ role: 'tool', tool_call_id: 'h', content: 'error: hang timed out after 300 ms' });
    expect(events[0]).toMatchObject({ name: 'hang', timed_out: true, error: 'hang timed out after 300 ms' });
    // The episode's next call runs as usual (with a limit a loaded machine cannot reach).
    const next = await runTools(k, [call('c', 'calculator', { expression: '6*7' })], { ...config, timeout_ms: 60_000 });
    expect(next.results[0]!.content).toBe('42');
    expect(readFileSync(join(dirOf(k), 'child.txt'), 'utf8').trim()).toBe('started');
    // SIGKILL is delivered asynchronously: wait for the process to be gone.
    await expect.poll(() => processesRunning(`sleep\0${LINGER}`), { timeout: 10_000, interval: 20 }).toEqual([]);
    tools.evict!(k);
  });

  it('runs with a clean environment: PATH, PWD, and HOME/TMPDIR inside the working directory; no server secret', async () => {
    const k = key();
    const secret = 'sk-test-secret-value-0123456789';
    process.env.OPENAI_API_KEY = secret;
    process.env.EVAL_API_TOKEN = secret;
    try {
      const { results } = await runTools(k, [call('e', 'env', {})], { tools: { env: { command: ['env'] } } });
      const vars = Object.fromEntries(
        results[0]!.content.split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      expect(Object.keys(vars).sort()).toEqual(['HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR']);
      expect(vars.HOME).toBe(dirOf(k));
      expect(vars.TMPDIR).toBe(join(dirOf(k), '.tmp'));
      expect(results[0]!.content).not.toContain(secret);
    } finally {
      delete process.env.OPENAI_API_KEY;
      delete process.env.EVAL_API_TOKEN;
      tools.evict!(k);
    }
  });

  it('gives each episode its own working directory and removes it at eviction', async () => {
    const a = key();
    const b = key();
    const config = { tools: { touch: { command: ['sh', '-c', 'echo here > mine.txt; pwd'] } } };
    const ra = await runTools(a, [call('1', 'touch', {})], config);
    const rb = await runTools(b, [call('1', 'list_dir', {})], config);
    expect(ra.results[0]!.content).toBe(dirOf(a));
    expect(rb.results[0]!.content).toBe('(empty)');
    expect(existsSync(join(dirOf(a), 'mine.txt'))).toBe(true);
    tools.evict!(a);
    expect(existsSync(dirOf(a))).toBe(false);
    expect(existsSync(dirOf(b))).toBe(true);
    tools.evict!(b);
    expect(existsSync(dirOf(b))).toBe(false);
    tools.evict!(b); // idempotent
  });

  it('eviction stops a call still running in the episode', async () => {
    const k = key();
    const config = { timeout_ms: 60_000, tools: { slow: { command: ['sh', '-c', 'touch started; exec sleep 60'] } } };
    const pending = runTools(k, [call('s', 'slow', {})], config);
    const marker = join(dirOf(k), 'started');
    // Wait for the tool to have started (its marker file), then end the episode.
    await expect.poll(() => existsSync(marker), { timeout: 10_000, interval: 20 }).toBe(true);
    tools.evict!(k);
    const { results, events } = await pending;
    expect(results[0]!.content).toBe('error: slow was stopped: the episode ended');
    expect(events[0]!.timed_out).toBe(false);
    expect(existsSync(dirOf(k))).toBe(false);
  });

  it('cuts stdout and stderr at max_output_chars and says so', async () => {
    const k = key();
    const config = {
      max_output_chars: 1000,
      tools: {
        loud: { command: [process.execPath, '-e', 'process.stdout.write("x".repeat(100000)); process.stderr.write("y".repeat(5000))'] },
      },
    };
    const { results, events } = await runTools(k, [call('l', 'loud', {})], config);
    expect(results[0]!.content).toBe(`${'x'.repeat(1000)}\n[output cut at 1000 characters]`);
    expect(events[0]!.stdout).toHaveLength(1000);
    expect(events[0]!.stderr).toHaveLength(1000);
    tools.evict!(k);
  });

  it('answers an unknown tool, bad arguments, calls past the per-turn cap and a missing program with errors, without failing', async () => {
    const k = key();
    const config = { builtins: ['calculator'], max_calls_per_step: 4, tools: { ghost: { command: ['no-such-program-here'] } } };
    const { results } = await runTools(
      k,
      [
        call('1', 'rm_rf', {}),
        call('2', 'calculator', '{not json'),
        call('3', 'calculator', '[1]'),
        call('4', 'ghost', {}),
        call('5', 'calculator', { expression: '1+1' }),
      ],
      config,
    );
    expect(results.map((r) => r.content)).toEqual([
      'error: unknown tool "rm_rf" (available: calculator, ghost)',
      'error: the arguments of calculator are not valid JSON: "{not json"',
      'error: the arguments of calculator must be a JSON object, got [1]',
      'error: cannot start ghost: no-such-program-here not found',
      'error: more than 4 tool calls in one turn; this one was not run',
    ]);
    tools.evict!(k);
  });

  it('read_file and list_dir see the files config put in the working directory and nothing outside it', async () => {
    const k = key();
    const config = { files: { 'notes/todo.txt': 'buy milk\n' } };
    const { results } = await runTools(
      k,
      [
        call('1', 'list_dir', {}),
        call('2', 'list_dir', { path: 'notes' }),
        call('3', 'read_file', { path: 'notes/todo.txt' }),
        call('4', 'read_file', { path: '../../../../etc/passwd' }),
        call('5', 'read_file', { path: '/etc/hostname' }),
      ],
      config,
    );
    expect(results.map((r) => r.content)).toEqual([
      'notes/',
      'todo.txt',
      'buy milk',
      'error: read_file exited with code 1: ../../../../etc/passwd is outside the working directory',
      'error: read_file exited with code 1: /etc/hostname is outside the working directory',
    ]);
    tools.evict!(k);
  });

  it('refuses bad config with an error naming the key', async () => {
    const k = key();
    await expect(runTools(k, [call('1', 'x', {})], { builtins: ['shell'] })).rejects.toThrow(
      /config builtins: unknown built-in tool "shell"/,
    );
    await expect(runTools(k, [call('1', 'x', {})], { tools: { x: { command: 'ls' } } })).rejects.toThrow(
      /config tools.x.command must be a non-empty array of strings/,
    );
    await expect(runTools(k, [call('1', 'x', {})], { timeout_ms: 0 })).rejects.toThrow(/config timeout_ms must be a positive integer/);
    tools.evict!(k);
  });

  it('declares its tools to a model in OpenAI form; python only when asked for', () => {
    const declared = openAiTools(toolSet({}));
    expect(declared.map((t) => t.function.name)).toEqual(['calculator', 'read_file', 'list_dir']);
    expect(declared[0]).toEqual({
      type: 'function',
      function: {
        name: 'calculator',
        description: BUILTIN_TOOLS.calculator!.description,
        parameters: BUILTIN_TOOLS.calculator!.parameters,
      },
    });
    expect([...toolSet({ builtins: ['python'] }).keys()]).toEqual(['python']);
  });
});
