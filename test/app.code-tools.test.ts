/**
 * Code runs only where the operator put it. A client that names its own endpoint and a command
 * tool in a run's overrides (the endpoint then asks for that tool) is refused at submit on every
 * path — startEval, startSweep, playEpisode, a run file through `evalctl run --server` — and
 * nothing runs. The same command in a workspace graph file runs on a server started with the
 * switch; python needs the switch too; base_url may name the configured endpoint only.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR, PACKAGE_ROOT } from '../src/paths.js';
import { START_EVAL, startServer, waitFor, wsCollect, type GqlResult, type TestServer } from './app.helpers.js';
import { startOpenAIStub, type OpenAIStub } from './support/openai-stub.js';

const CLI = join(DIST_DIR, 'main.js');
const SAVED = ['OPENAI_BASE_URL', 'EVAL_LLM_ENDPOINTS', 'EVAL_ALLOW_CODE_TOOLS'].map((k) => [k, process.env[k]] as const);

let tmp: string;
let marker: string;
/** The endpoint the operator configured (OPENAI_BASE_URL). */
let known: OpenAIStub;
/** An endpoint a client controls: it asks for whatever tool it was offered. */
let own: OpenAIStub;
let plain: TestServer;

const shTool = () => ({ command: ['sh', '-c', `id > '${marker}'`], description: 'runs a shell line' });
const shDecl = {
  type: 'function',
  function: { name: 'sh', description: 'runs a shell line', parameters: { type: 'object', properties: {} } },
};
/** The attack: react_llm with the client's endpoint and a command tool of its choice, which that endpoint asks for. */
const repro = () => ({
  llm: { base_url: own.baseURL, api_key_env: '', model: 'stub-model', tools: [shDecl] },
  tools: { tools: { sh: shTool() } },
});
const codeOf = (r: GqlResult) => r.errors?.[0]?.extensions;
const runDirs = async (s: TestServer) => {
  const dir = join(s.dir, 'outputs', 'eval_runs');
  return existsSync(dir) ? await readdir(dir) : [];
};

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'code-tools-'));
  marker = join(tmp, 'marker');
  [known, own] = await Promise.all([startOpenAIStub(), startOpenAIStub()]);
  process.env.OPENAI_BASE_URL = `${known.baseURL}/`;
  delete process.env.EVAL_LLM_ENDPOINTS;
  delete process.env.EVAL_ALLOW_CODE_TOOLS;
  plain = await startServer();
});
afterAll(async () => {
  await plain?.stop();
  await Promise.all([known?.close(), own?.close()]);
  for (const [k, v] of SAVED) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await rm(tmp, { recursive: true, force: true });
});

describe('code runs only where the operator put it', { timeout: 120_000 }, () => {
  it('refuses the repro at submit through startEval, startSweep, playEpisode and a run file with --server: nothing runs', async () => {
    const viaEval = await plain.gql(START_EVAL, { input: { graphName: 'react_llm', episodeCount: 1, overrides: repro() } });
    expect(codeOf(viaEval)).toEqual({ code: 'ENDPOINT_NOT_ALLOWED', field: 'overrides.llm.base_url' });
    expect(viaEval.errors?.[0]?.message).not.toContain(known.baseURL);
    // With an endpoint the server knows, the command tool itself is refused.
    const toolOnly = { ...repro(), llm: { ...repro().llm, base_url: known.baseURL } };
    const viaTool = await plain.gql(START_EVAL, { input: { graphName: 'react_llm', episodeCount: 1, overrides: toolOnly } });
    expect(codeOf(viaTool)).toEqual({ code: 'OVERRIDE_NOT_ALLOWED', field: 'overrides.tools.tools' });

    const SWEEP = 'mutation($base: StartEvalInput!, $grid: JSON!) { startSweep(base: $base, grid: $grid) { id } }';
    const sweepTool = await plain.gql(SWEEP, {
      base: { graphName: 'react_llm', episodeCount: 1, overrides: toolOnly },
      grid: { 'llm.temperature': [0, 0.5] },
    });
    expect(codeOf(sweepTool)).toMatchObject({ code: 'OVERRIDE_NOT_ALLOWED' });
    // A grid whose first point is allowed and second not: refused before any run is queued.
    const sweepUrl = await plain.gql(SWEEP, {
      base: { graphName: 'react_llm', episodeCount: 1, overrides: { llm: { model: 'stub-model', api_key_env: '' } } },
      grid: { 'llm.base_url': [known.baseURL, own.baseURL] },
    });
    expect(codeOf(sweepUrl)).toEqual({ code: 'ENDPOINT_NOT_ALLOWED', field: 'overrides.llm.base_url' });

    const play = await wsCollect(
      plain.ws(),
      'subscription($o: JSON) { playEpisode(graphName: "react_llm", index: 0, overrides: $o) { kind } }',
      { o: toolOnly },
    );
    expect(play).toHaveLength(1);
    expect(codeOf(play[0]!)).toMatchObject({ code: 'OVERRIDE_NOT_ALLOWED', field: 'overrides.tools.tools' });

    const file = join(tmp, 'attack.json');
    await writeFile(file, JSON.stringify({ graphName: 'react_llm', episodeCount: 1, overrides: repro() }));
    const cli = await execa(process.execPath, [CLI, 'run', '--config', file, '--server', plain.url, '--json'], { reject: false });
    expect(cli.exitCode, cli.stderr).toBe(2);
    expect(cli.stderr).toMatch(/ENDPOINT_NOT_ALLOWED|overrides\.llm\.base_url: .* is not an endpoint this server knows/);
    await writeFile(file, JSON.stringify({ graphName: 'react_llm', episodeCount: 1, overrides: toolOnly }));
    const cliTool = await execa(process.execPath, [CLI, 'run', '--config', file, '--server', plain.url], { reject: false });
    expect(cliTool.exitCode, cliTool.stderr).toBe(2);
    expect(cliTool.stderr).toContain('overrides.tools.tools');
    // The local CLI keeps the same rules, naming where the overrides came from.
    const local = await execa(process.execPath, [CLI, 'run', '--config', file, '--outputs', join(tmp, 'local')], {
      reject: false,
      env: { OPENAI_BASE_URL: known.baseURL },
    });
    expect(local.exitCode, local.stderr).toBe(2);
    expect(local.stderr).toMatch(/overrides\.tools\.tools \(attack\.json/);

    expect(await runDirs(plain)).toEqual([]);
    expect(existsSync(join(plain.dir, 'outputs', 'sweeps')) ? await readdir(join(plain.dir, 'outputs', 'sweeps')) : []).toEqual([]);
    expect(existsSync(join(tmp, 'local', 'eval_runs'))).toBe(false);
    expect(own.stats().requests).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });

  it('python needs the switch; base_url may be the configured endpoint, not another', async () => {
    const python = { tools: { builtins: ['calculator', 'python'] } };
    const refused = await plain.gql(START_EVAL, { input: { graphName: 'react_llm', episodeCount: 1, overrides: python } });
    expect(codeOf(refused)).toEqual({ code: 'CODE_TOOLS_DISABLED', field: 'overrides.tools.builtins' });
    expect(refused.errors?.[0]?.message).toMatch(/--allow-code-tools/);

    const other = await plain.gql(START_EVAL, {
      input: { graphName: 'react_llm', episodeCount: 1, overrides: { llm: { base_url: 'http://127.0.0.1:9/v1', model: 'm' } } },
    });
    expect(codeOf(other)).toEqual({ code: 'ENDPOINT_NOT_ALLOWED', field: 'overrides.llm.base_url' });
    // The configured one, written without the trailing slash OPENAI_BASE_URL has: accepted.
    const same = await plain.gql(START_EVAL, {
      input: {
        graphName: 'react_llm',
        episodeCount: 1,
        overrides: { llm: { base_url: known.baseURL, model: 'stub-model', api_key_env: '' } },
      },
    });
    expect(same.errors).toBeUndefined();
    const runId = same.data!.startEval.runId as string;
    const r = await plain.gql(`query($id: ID!) { run(id: $id) { codeTools } }`, { id: runId });
    expect(r.data?.run.codeTools).toEqual([]);
    await plain.gql(`mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: runId });
  });

  it('with --allow-code-tools: a command tool from a graph file runs, python is accepted, and the run says it uses them', async () => {
    const ws = join(tmp, 'ws');
    await mkdir(join(ws, 'graphs'), { recursive: true });
    const react = JSON.parse(await readFile(join(PACKAGE_ROOT, 'graphs', 'react_llm.json'), 'utf8')) as {
      name: string;
      nodes: Array<{ id: string; config?: Record<string, unknown> }>;
    };
    react.name = 'react_sh';
    for (const n of react.nodes) {
      if (n.id === 'llm') n.config = { ...n.config, model: 'stub-model', api_key_env: '', tools: [shDecl], max_llm_calls: 2 };
      // Tool calls run in a sandbox whose only writable folder is the episode's: the command prints, the record shows it.
      if (n.id === 'tools') n.config = { builtins: [], tools: { sh: { command: ['sh', '-c', 'id'], description: 'runs a shell line' } } };
    }
    await writeFile(join(ws, 'graphs', 'react_sh.json'), JSON.stringify(react));

    // Without the switch, the operator's own command tool does not run either.
    const off = await startServer({ scheduler: { workspaceDir: ws } });
    try {
      const refused = await off.gql(START_EVAL, { input: { graphName: 'react_sh', episodeCount: 1 } });
      expect(codeOf(refused)).toEqual({ code: 'CODE_TOOLS_DISABLED', field: 'graphName' });
    } finally {
      await off.stop();
    }

    const on = await startServer({ scheduler: { workspaceDir: ws, allowCodeTools: true } });
    try {
      // Operator-only stays operator-only with the switch.
      const still = await on.gql(START_EVAL, {
        input: { graphName: 'react_llm', episodeCount: 1, overrides: { tools: { tools: { sh: shTool() } } } },
      });
      expect(codeOf(still)).toMatchObject({ code: 'OVERRIDE_NOT_ALLOWED' });

      const started = await on.gql(START_EVAL, { input: { graphName: 'react_sh', episodeCount: 1 } });
      expect(started.errors).toBeUndefined();
      const runId = started.data!.startEval.runId as string;
      const done = await waitFor(
        'the run to end',
        async () => {
          const r = await on.gql(`query($id: ID!) { run(id: $id) { status codeTools } }`, { id: runId });
          return ['QUEUED', 'RUNNING'].includes(r.data?.run.status) ? undefined : r.data!.run;
        },
        90_000,
        200,
      );
      expect(done).toEqual({ status: 'COMPLETED', codeTools: ['tools.sh'] });
      const ran = await on.gql(`query($id: ID!) { run(id: $id) { episode(index: 0) { events(first: 100) { events } } } }`, { id: runId });
      const calls = (ran.data!.run.episode.events.events as Array<Record<string, unknown>>).filter((e) => e.type === 'tool_call');
      expect(calls[0]).toMatchObject({ name: 'sh', exit_code: 0, stdout: expect.stringMatching(/^uid=\d+/) });

      const py = await on.gql(START_EVAL, {
        input: {
          graphName: 'react_llm',
          episodeCount: 1,
          overrides: { llm: { model: 'stub-model', api_key_env: '' }, tools: { builtins: ['calculator', 'python'] } },
        },
      });
      expect(py.errors).toBeUndefined();
      const pyRun = await on.gql(`query($id: ID!) { run(id: $id) { codeTools } }`, { id: py.data!.startEval.runId });
      expect(pyRun.data?.run.codeTools).toEqual(['tools.python']);
    } finally {
      await on.stop();
    }
  });
});
