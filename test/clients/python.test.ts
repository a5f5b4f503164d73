/**
 * The Python client (clients/python) against a real server: installed with pip into a fresh
 * venv with no package index, it starts a run, follows it over SSE to the end, reads its
 * episodes (a DataFrame where pandas is importable, else a list of dicts), exports it, and
 * raises the server's error codes as exceptions. follow()'s edges (streams that close early,
 * stall or hold garbage) run against a scripted local server speaking the same SSE format.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { startServer, type TestServer } from '../app.helpers.js';

const TOKEN = 'py-client-token';
// No index, no user config, no cache, no bytecode in the source tree: pip must manage with what the venv has.
const PIP_ENV = {
  PIP_NO_INDEX: '1',
  PIP_CONFIG_FILE: '/dev/null',
  PIP_NO_CACHE_DIR: '1',
  PIP_DISABLE_PIP_VERSION_CHECK: '1',
  PYTHONDONTWRITEBYTECODE: '1',
};

const SCRIPT = `
import json, sys
import batch_eval
from batch_eval import Client, BatchEvalError, NotFoundError, BadInputError, UnauthenticatedError

url, token = sys.argv[1], sys.argv[2]
client = Client(url + "/graphql", token=token)
out = {}
run_id = client.start("gridnav_planner", episodes=3, workers=2, seed=5, dataset="mini", overrides={"agent": {"epsilon": 0}})
out["runId"] = run_id
states = []
final = client.follow(run_id, on_update=lambda s: states.append(s["episodesDone"]))
out["final"] = final
out["done"] = states
eps = client.episodes(run_id)
try:
    import pandas
    out["frame"] = isinstance(eps, pandas.DataFrame)
    out["columns"] = list(eps.columns)
    out["indexes"] = [int(i) for i in eps["index"]]
    out["spl"] = [float(v) for v in eps["metric.spl"]]
except ImportError:
    out["frame"] = False
    out["indexes"] = [e["index"] for e in eps]
    out["spl"] = [e["metrics"]["spl"] for e in eps]
out["records"] = client.episodes(run_id, as_frame=False)
out["csv"] = client.export(run_id, "csv").decode("utf-8")
out["run"] = client.run(run_id)["status"]
errors = {}
for name, call in [
    ("notFound", lambda: client.run("20990101_000000")),
    ("badGraph", lambda: client.start("no_such_graph", episodes=1)),
    ("badField", lambda: client.start("gridnav_planner", episodes=0)),
    ("token", lambda: Client(url, token="wrong").run(run_id)),
    ("cancelDone", lambda: client.cancel(run_id)),
    ("followUnknown", lambda: client.follow("20990101_000000", progress=False, retry_for=5)),
]:
    try:
        call()
        errors[name] = None
    except BatchEvalError as err:
        errors[name] = [type(err).__name__, err.code]
out["errors"] = errors
# A finished run: its end at once, over a fresh stream.
out["again"] = client.follow(run_id, progress=False, deadline=30)["status"]
print(json.dumps(out))
`;

let server: TestServer;
let tmp: string;
let python: string;
let hasPandas: boolean;

beforeAll(async () => {
  server = await startServer({ token: TOKEN });
  tmp = await mkdtemp(join(tmpdir(), 'py-client-'));
  // Debian's python3-pandas lives beside /usr/bin/python3: a venv over it (--system-site-packages) sees it.
  const candidates = ['/usr/bin/python3', 'python3'];
  let base = 'python3';
  hasPandas = false;
  for (const c of candidates) {
    const probe = await execa(c, ['-c', 'import pandas'], { reject: false });
    if (probe.exitCode === 0) {
      base = c;
      hasPandas = true;
      break;
    }
  }
  await execa(base, ['-m', 'venv', '--system-site-packages', join(tmp, 'venv')]);
  python = join(tmp, 'venv', 'bin', 'python');
  await execa(python, ['-m', 'pip', 'install', '--no-index', join(PACKAGE_ROOT, 'clients', 'python')], { env: PIP_ENV });
}, 120_000);
afterAll(async () => {
  await server?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('clients/python (batch_eval)', { timeout: 120_000 }, () => {
  it('installed with no index: starts a run, follows it to the end, returns its episodes; errors carry the server codes', async () => {
    const r = await execa(python, ['-c', SCRIPT, server.url, TOKEN], { reject: false, cwd: tmp, env: { PYTHONDONTWRITEBYTECODE: '1' } });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.final).toMatchObject({ id: out.runId, status: 'COMPLETED', episodesDone: 3, episodeCount: 3 });
    expect(out.done.at(-1)).toBe(3);
    expect(out.run).toBe('COMPLETED');
    expect(out.indexes).toEqual([0, 1, 2]);
    // epsilon 0: the planner is optimal, so every SPL is 1.
    expect(out.spl).toEqual([1, 1, 1]);
    expect(out.frame).toBe(hasPandas);
    if (hasPandas) expect(out.columns).toEqual(expect.arrayContaining(['index', 'episodeId', 'status', 'metric.spl', 'metric.success']));
    expect(out.records.map((e: { episodeId: string }) => e.episodeId)).toEqual(['mini/val/0', 'mini/val/1', 'mini/val/2']);
    const csv = await (await fetch(`${server.url}/runs/${out.runId}/export.csv`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(out.csv).toBe(csv);
    expect(out.errors).toEqual({
      notFound: ['NotFoundError', 'NOT_FOUND'],
      badGraph: ['BadInputError', 'BAD_USER_INPUT'],
      badField: ['BadInputError', 'BAD_USER_INPUT'],
      token: ['UnauthenticatedError', 'UNAUTHENTICATED'],
      cancelDone: ['ConflictError', 'CONFLICT'],
      followUnknown: ['NotFoundError', 'NOT_FOUND'],
    });
    expect(out.again).toBe('COMPLETED');
  });

  it("episodes(): a dataset run's input, target, answer and extracted answer are flat columns", async () => {
    const runId = '20260103_080000';
    const runDir = join(server.dir, 'outputs', 'eval_runs', runId);
    const record = {
      index: 0,
      episodeId: 'arith/test/q7',
      status: 'COMPLETED',
      steps: 1,
      metrics: { score: 1 },
      seed: 1,
      workerId: 0,
      durationMs: 5,
      startedAt: '2026-01-03T08:00:00.000Z',
      finishedAt: '2026-01-03T08:00:01.000Z',
      instruction: 'What is 6 * 7?',
      sampleId: 'q7',
      stepBudget: 4,
      assets: [],
      scores: [{ scorer: 'numeric', value: 1, answer: 'It is 42.', extracted: '42', target: 42, explanation: '42 = 42' }],
    };
    await mkdir(join(runDir, 'episodes', 'ep0000'), { recursive: true });
    await writeFile(join(runDir, 'episodes', 'ep0000', 'episode.json'), JSON.stringify(record));
    await writeFile(
      join(runDir, 'spec.json'),
      JSON.stringify({ runId, graphName: 'qa_llm', episodeCount: 1, workerCount: 1, createdAt: record.startedAt }),
    );
    const script = `
import json, sys
from batch_eval import Client
eps = Client(sys.argv[1] + "/graphql", token=sys.argv[2]).episodes(sys.argv[3])
cols = ["input", "target", "answer", "extracted", "metric.score"]
print(json.dumps(eps[cols].iloc[0].tolist() if hasattr(eps, "columns") else [eps[0][c] for c in cols[:4]], default=lambda v: v.item()))
`;
    const r = await execa(python, ['-c', script, server.url, TOKEN, runId], { reject: false, cwd: tmp });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(['What is 6 * 7?', '42', 'It is 42.', '42', ...(hasPandas ? [1] : [])]);
  });

  it('follow() against streams that close early, come empty, stall or hold garbage: only terminal states, bounded retries, typed errors', async () => {
    const r = await execa(python, [join(PACKAGE_ROOT, 'test', 'clients', 'fixtures', 'follow_edges.py')], {
      reject: false,
      cwd: tmp,
      env: { PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    // The stream closed while RUNNING: reopened, and the run's end returned.
    expect(out.earlyClose).toMatchObject({
      result: { status: 'COMPLETED', episodesDone: 30 },
      connections: 2,
      seen: [
        ['RUNNING', 10],
        ['COMPLETED', 30],
      ],
    });
    expect(out.empty).toMatchObject({ result: { status: 'FAILED' }, connections: 3 });
    // One state, then silence on every stream: reopened with backoff, then given up after retry_for (1.5 s), the repeats not passed on.
    expect(out.stalled).toMatchObject({ error: 'StreamStalledError', seen: [['RUNNING', 3]] });
    expect(out.stalled.connections).toBeGreaterThanOrEqual(2);
    expect(out.stalled.seconds).toBeGreaterThanOrEqual(1.5);
    expect(out.silent).toMatchObject({ error: 'StreamStalledError' });
    expect(out.silent.connections).toBeGreaterThanOrEqual(2);
    // Keep-alives without an end: the deadline (1 s) ends it, with the last state.
    expect(out.deadline).toMatchObject({ error: 'FollowTimeoutError', last: { status: 'RUNNING', episodesDone: 7 }, connections: 1 });
    expect(out.deadline.seconds).toBeGreaterThanOrEqual(1);
    for (const name of ['notJson', 'noField', 'noStatus', 'notStream', 'runNotJson', 'runNoField', 'errorsNotList'])
      expect(out[name], name).toMatchObject({ error: 'ProtocolError', rawError: false, connections: 1 });
    expect(out.notFound).toMatchObject({ error: 'NotFoundError', connections: 1 });
    expect(out.unreachable.error).toBe('ConnectionFailedError');
    expect(out.unreachable.seconds).toBeGreaterThanOrEqual(1);
  });
});
