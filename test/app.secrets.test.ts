/**
 * The model key out of a tool's reach: `evalctl serve` started with a key in its environment,
 * the stand-in model as the endpoint, and a python tool the operator enabled (a workspace graph).
 * The model has the tool search every readable /proc/<pid>/environ and the server's outputs folder
 * for the key, then print the key (rebuilt from two halves): the search finds nothing, the
 * printed key is redacted, and the key is in no file of the outputs folder, no API answer and no
 * request the endpoint received (but its Authorization header).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../src/paths.js';
import { gql, START_EVAL, urlFrom, waitFor } from './app.helpers.js';
import { startOpenAIStub, type OpenAIStub } from './support/openai-stub.js';
import { filesContaining } from './support/run-files.js';

const MAIN = join(DIST_DIR, 'main.js');
// Two halves: the program the model sends holds neither the key nor anything that redaction would touch.
const HALVES = ['sk-probe-7f3c9e1b', '2d4a6e8f0c5b7d9a1'] as const;
const KEY = HALVES.join('');

const program = (outputs: string): string =>
  [
    'import glob, os',
    `k = (${JSON.stringify(HALVES[0])} + ${JSON.stringify(HALVES[1])}).encode()`,
    'found = []',
    'def scan(path):',
    '    try:',
    '        with open(path, "rb") as f:',
    '            if k in f.read(): found.append(path)',
    '    except OSError:',
    '        pass',
    'for p in glob.glob("/proc/*/environ"): scan(p)',
    `for root, dirs, files in os.walk(${JSON.stringify(outputs)}):`,
    '    for name in files: scan(os.path.join(root, name))',
    'print("processes seen:", len(glob.glob("/proc/[0-9]*")))',
    'print("found:", found)',
    'print("the key:", k.decode())',
  ].join('\n');

const graph = {
  name: 'secret_probe',
  step_budget: 4,
  nodes: [
    { id: 'env', type: 'env_dataset__sample' },
    {
      id: 'llm',
      type: 'llm__chat',
      config: {
        model: 'stub-model',
        retry_base_ms: 1,
        tools: [
          {
            type: 'function',
            function: {
              name: 'python',
              description: 'Runs a Python 3 program',
              parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
            },
          },
        ],
      },
    },
    { id: 'tools', type: 'tools__run', config: { builtins: ['python'], timeout_ms: 30_000 } },
    { id: 'score', type: 'score__includes' },
    { id: 'result', type: 'graphOut' },
  ],
  edges: [
    { from: 'env.messages', to: 'llm.messages' },
    { from: 'llm.tool_calls', to: 'tools.tool_calls' },
    { from: 'tools.tool_results', to: 'llm.tool_results', loop: true },
    { from: 'llm.answer', to: 'score.answer' },
    { from: 'env.target', to: 'score.target' },
    { from: 'score.metrics', to: 'result.metrics' },
  ],
};

const EPISODE = `{
  run(id: $id) {
    status
    error { code message }
    episode(index: 0) {
      status error metrics
      events(first: 2000) { events total }
      log(first: 2000) { lines { entry } total }
    }
  }
}`;

const environOf = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return '';
  }
};

/** Every live process below `pid`, by the parent pids in /proc. */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const below = (p: number): number[] => [...parent].filter(([, pp]) => pp === p).flatMap(([c]) => [c, ...below(c)]);
  return below(pid);
}

let stub: OpenAIStub;
let tmp: string;
let server: ResultPromise | undefined;

beforeAll(async () => {
  stub = await startOpenAIStub({ expectedKey: KEY });
  tmp = await mkdtemp(join(tmpdir(), 'app-secrets-'));
});
afterAll(async () => {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  await server?.catch(() => {});
  await stub.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('the model key and a python tool', { timeout: 120_000 }, () => {
  it('the tool finds the key in no process and no file; it reaches no file, API answer or request body', async () => {
    const ws = join(tmp, 'ws');
    const outputs = join(tmp, 'outputs');
    await mkdir(join(ws, 'graphs'), { recursive: true });
    await mkdir(join(ws, 'datasets', 'probe'), { recursive: true });
    await writeFile(join(ws, 'graphs', 'secret_probe.json'), JSON.stringify(graph));
    await writeFile(join(ws, 'datasets', 'probe', 'dataset.json'), JSON.stringify({ description: 'one program', defaultSplit: 'test' }));
    await writeFile(
      join(ws, 'datasets', 'probe', 'test.jsonl'),
      `${JSON.stringify({ id: 'p0', input: program(outputs), target: 'found: []' })}\n`,
    );
    server = execa('node', [MAIN, 'serve', '--port', '0', '--outputs', outputs], {
      reject: false,
      forceKillAfterDelay: false,
      env: {
        EVAL_API_TOKEN: '',
        OPENAI_API_KEY: KEY,
        OPENAI_BASE_URL: stub.baseURL,
        ACTIVE_WORKSPACE_DIR: ws,
        EVAL_ALLOW_CODE_TOOLS: '1',
        EVAL_LLM_CACHE_DIR: '',
      },
    });
    const url = await urlFrom(server);
    // The probe can find a key where there is one: the server's own start environment holds it.
    expect(readFileSync(`/proc/${server.pid}/environ`, 'latin1')).toContain(KEY);

    const started = await gql(url, START_EVAL, { input: { graphName: 'secret_probe', episodeCount: 1, dataset: 'probe' } });
    expect(started.errors).toBeUndefined();
    const runId = started.data!.startEval.runId as string;
    const query = `query Q($id: ID!) ${EPISODE}`;
    const answer = await waitFor(
      'the run to finish',
      async () => {
        const r = await gql(url, query, { id: runId });
        return ['COMPLETED', 'FAILED', 'ABORTED', 'CANCELLED'].includes(r.data?.run?.status) ? r : undefined;
      },
      90_000,
    );
    const episode = answer.data!.run.episode;
    expect(episode, JSON.stringify(episode.error)).toMatchObject({ status: 'COMPLETED', metrics: { score: 1 } });

    const toolCall = (episode.events.events as Array<Record<string, unknown>>).find((e) => e.type === 'tool_call');
    expect(toolCall, JSON.stringify(episode.events)).toBeDefined();
    const stdout = String(toolCall!.stdout);
    // Alone in its PID namespace: python and the sandbox's own init, nothing of the server's.
    expect(Number(/processes seen: (\d+)/.exec(stdout)?.[1])).toBeLessThanOrEqual(3);
    expect(stdout).toContain('found: []');
    expect(stdout).toContain('the key: [redacted]');

    const text = JSON.stringify(answer);
    expect(text).not.toContain(KEY);
    expect(await filesContaining(outputs, KEY)).toEqual([]);
    expect(await filesContaining(ws, KEY)).toEqual([]);
    const received = stub.received();
    expect(received.length).toBeGreaterThanOrEqual(2);
    expect(received.filter((r) => r.includes(KEY))).toEqual([]);
    // The tool's answer reached the model redacted.
    expect(received.some((r) => r.includes('the key: [redacted]'))).toBe(true);

    // The processes the server started (its shared hosts, still up) started without the key.
    const children = descendants(server.pid!);
    expect(children.length).toBeGreaterThan(0);
    expect(children.filter((pid) => environOf(pid).includes(KEY))).toEqual([]);

    server.kill('SIGTERM');
    expect((await server).exitCode).toBe(0);
  });
});
