/**
 * auditRun on a real server: a finished gridnav run re-played at another worker count passes and
 * Run.audit says so; at its own worker count it is re-played too, and evalctl audit says that
 * this checks replay only; a run whose nodeset code changed since (a workspace copy, edited) is refused
 * by the manifest check before anything is queued.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { DIST_DIR } from '../src/paths.js';
import { episodeDir } from '../src/store/run-dir.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, START_EVAL, startServer, waitFor, type TestServer } from './app.helpers.js';

const EXAMPLE_DIR = join(import.meta.dirname, '..', 'examples', 'python-env');

let server: TestServer;
let ws: string;

beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), 'app-audit-'));
  await cp(EXAMPLE_DIR, join(ws, 'graph_nodes', 'env_corridor'), { recursive: true });
  await mkdir(join(ws, 'graphs'), { recursive: true });
  await cp(join(EXAMPLE_DIR, 'graph.json'), join(ws, 'graphs', 'python_corridor.json'));
  server = await startServer({ scheduler: { workspaceDir: ws } });
});
afterAll(async () => {
  await server?.stop();
  await rm(ws, { recursive: true, force: true });
});

const RUN = `query($id: ID!) { run(id: $id) { id status workerCount auditOf
  audit { status passed auditRunId sample workerCount originalWorkerCount episodesCompared notes
    diffs { index episodeId moreFields fields { path original audit } } error { code message } } } }`;
const AUDIT = `mutation($id: ID!, $sample: Int, $workerCount: Int) {
  auditRun(id: $id, sample: $sample, workerCount: $workerCount) { status auditRunId sample workerCount originalWorkerCount } }`;
const RUNS = `{ runs { total items { id } } }`;

async function finishedRun(input: Record<string, unknown>): Promise<string> {
  const started = await server.gql<{ startEval: { runId: string } }>(START_EVAL, { input });
  expect(started.errors).toBeUndefined();
  const id = started.data!.startEval.runId;
  const status = await waitFor(
    'the run to finish',
    async () => {
      const s = (await server.gql(RUN, { id })).data?.run?.status as string | undefined;
      return s && ['COMPLETED', 'FAILED', 'CANCELLED', 'ABORTED'].includes(s) ? s : undefined;
    },
    60_000,
  );
  expect(status).toBe('COMPLETED');
  return id;
}

describe('auditRun', () => {
  it('re-plays a seeded sample of a finished gridnav run at another worker count: passed, shown in Run.audit', async () => {
    const id = await finishedRun({ graphName: 'gridnav_planner', episodeCount: 6, workerCount: 2, seed: 5 });
    const asked = await server.gql(AUDIT, { id, sample: 4 });
    expect(asked.errors).toBeUndefined();
    const started = asked.data!.auditRun;
    expect(started).toMatchObject({ status: 'RUNNING', workerCount: 1, originalWorkerCount: 2 });
    expect(started.sample).toHaveLength(4);
    expect([...started.sample].sort((a: number, b: number) => a - b)).toEqual(started.sample);

    // Asked again while it runs: the same audit, no second scratch run.
    expect((await server.gql(AUDIT, { id, sample: 4 })).data!.auditRun.auditRunId).toBe(started.auditRunId);

    const run = await waitFor(
      'the audit verdict',
      async () => {
        const r = (await server.gql(RUN, { id })).data?.run;
        return r?.audit?.status !== 'RUNNING' ? r : undefined;
      },
      60_000,
    );
    expect(run.audit).toMatchObject({
      status: 'PASSED',
      passed: true,
      auditRunId: started.auditRunId,
      sample: started.sample,
      workerCount: 1,
      originalWorkerCount: 2,
      episodesCompared: 4,
      diffs: [],
      error: null,
    });
    expect(existsSync(join(server.dir, 'outputs', 'eval_runs', id, 'audit.json'))).toBe(true);
    const scratch = (await server.gql(RUN, { id: started.auditRunId })).data!.run;
    expect(scratch).toMatchObject({ status: 'COMPLETED', auditOf: id, workerCount: 1, audit: null });

    // The sample is seeded from the run id: a second audit re-plays the same episodes.
    const again = await server.gql(AUDIT, { id, sample: 4 });
    expect(again.data!.auditRun.sample).toEqual(started.sample);
    expect(again.data!.auditRun.auditRunId).not.toBe(started.auditRunId);
    await waitFor('the second verdict', async () => (await server.gql(RUN, { id })).data?.run?.audit?.status === 'PASSED', 60_000);

    // An audit's scratch run is not itself audited.
    expect(codeOf(await server.gql(AUDIT, { id: started.auditRunId }))).toBe('BAD_USER_INPUT');

    // Records that do not come out again (edited here, as a nondeterministic graph would make them): FAILED, with the field.
    // The run's records (records.jsonl) and the episodes' own records are edited.
    const runDir = join(server.dir, 'outputs', 'eval_runs', id);
    const recordsPath = join(runDir, 'records.jsonl');
    const lines = (await readFile(recordsPath, 'utf8')).trimEnd().split('\n');
    const edited: string[] = [];
    for (const line of lines) {
      const e = JSON.parse(line);
      e.metrics.spl = 0.123;
      edited.push(`${JSON.stringify(e)}\n`);
      const recordPath = join(episodeDir(runDir, e.index), 'episode.json');
      const record = JSON.parse(await readFile(recordPath, 'utf8'));
      record.metrics.spl = 0.123;
      await writeFile(recordPath, JSON.stringify(record));
    }
    await writeFile(recordsPath, edited.join(''));
    expect((await server.gql(AUDIT, { id, sample: 2, workerCount: 3 })).errors).toBeUndefined();
    const failed = await waitFor(
      'the failed verdict',
      async () => {
        const a = (await server.gql(RUN, { id })).data?.run?.audit;
        return a?.status !== 'RUNNING' ? a : undefined;
      },
      60_000,
    );
    expect(failed).toMatchObject({ status: 'FAILED', passed: false, episodesCompared: 2, workerCount: 2 });
    expect(failed.diffs).toHaveLength(2);
    expect(failed.diffs[0].fields).toEqual([{ path: 'metrics.spl', original: 0.123, audit: expect.any(Number) }]);
  });

  it("evalctl audit at the run's own worker count re-plays and verifies it, with a note that this checks replay, not worker-count independence", async () => {
    const id = await finishedRun({ graphName: 'gridnav_planner', episodeCount: 4, workerCount: 2, seed: 9 });
    const cli = await execa(
      process.execPath,
      [join(DIST_DIR, 'main.js'), 'audit', id, '--server', server.url, '--sample', '2', '--workers', '2'],
      { reject: false },
    );
    expect(cli.exitCode, cli.stderr).toBe(0);
    expect(cli.stderr).toContain('re-played at 2 worker(s) (the run used 2: a replay check only)');
    expect(cli.stdout.split('\n')).toEqual([
      `determinism: verified at 2 worker(s) on 2 episode(s) of run ${id}`,
      "note: re-played at the run's own worker count (2): this checks that its episodes replay to the same records, not that the worker count leaves them unchanged; for that, audit at another --workers with a --sample of at least that many episodes",
    ]);
    expect((await server.gql(RUN, { id })).data!.run.audit).toMatchObject({ status: 'PASSED', workerCount: 2, originalWorkerCount: 2 });
  });

  it('evalctl audit verifies a run of a workspace nodeset; once its code is edited the audit is refused (AUDIT_MANIFEST_CHANGED), queueing nothing', async () => {
    const id = await finishedRun({ graphName: 'python_corridor', episodeCount: 3, workerCount: 1 });
    // Before the edit, `evalctl audit` verifies it (a Python env host, re-played at 2 workers).
    const cli = await execa(process.execPath, [join(DIST_DIR, 'main.js'), 'audit', id, '--server', server.url, '--sample', '2'], {
      reject: false,
    });
    expect(cli.exitCode).toBe(0);
    expect(cli.stdout).toContain(`determinism: verified at 2 worker(s) on 2 episode(s) of run ${id}`);
    const host = join(ws, 'graph_nodes', 'env_corridor', 'host.py');
    await writeFile(host, `${await readFile(host, 'utf8')}\n# edited after the run\n`);
    const before = (await server.gql(RUNS)).data!.runs.total;
    const refused = await server.gql(AUDIT, { id });
    expect(refused.data).toBeNull();
    expect(codeOf(refused)).toBe('AUDIT_MANIFEST_CHANGED');
    expect(refused.errors![0]!.message).toMatch(/env_corridor: its code differs/);
    expect(refused.errors![0]!.extensions!.changes).toEqual([expect.objectContaining({ kind: 'nodeset_code', subject: 'env_corridor' })]);
    expect((await server.gql(RUNS)).data!.runs.total).toBe(before);
    expect((await server.gql(RUN, { id })).data!.run.audit).toMatchObject({ status: 'PASSED' });
    const again = await execa(process.execPath, [join(DIST_DIR, 'main.js'), 'audit', id, '--server', server.url], { reject: false });
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toMatch(/cannot be audited: .*env_corridor: its code differs/);

    // The nodeset gone altogether: the frozen graph no longer resolves, refused the same way.
    await rm(join(ws, 'graph_nodes', 'env_corridor'), { recursive: true });
    const gone = await server.gql(AUDIT, { id });
    expect(codeOf(gone)).toBe('AUDIT_MANIFEST_CHANGED');
    expect(gone.errors![0]!.message).toMatch(/no longer resolves: .*env_corridor/);
    expect((await server.gql(RUNS)).data!.runs.total).toBe(before);
  });
});
