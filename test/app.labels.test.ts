/**
 * Runs you can tell apart: name, tags and note given at start, filtered on, edited with
 * updateRun into labels.json (spec.json stays as submitted), and read back after a restart.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LABELS_FILE } from '../src/store/labels-file.js';
import { CATALOG_FILE } from '../src/store/catalog.js';
import { FILES, runsRoot } from '../src/store/run-dir.js';
import { codeOf, startServer, waitFor, type TestServer } from './app.helpers.js';
import { writeSyntheticRun } from './e2e/synthetic-run.js';

let server: TestServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

const LABELS = 'id name tags note';

describe('run labels', () => {
  it('are set at start, filter the runs list, are edited into labels.json and survive a rebuilt catalog', async () => {
    dir = await mkdtemp(join(tmpdir(), 'labels-'));
    const outputsDir = join(dir, 'outputs');
    const other = await writeSyntheticRun(outputsDir, { runId: '20260101_120000', episodeCount: 2, workerCount: 1 });
    server = await startServer({ outputsDir });
    const s = server;

    const started = await s.gql(`mutation($in: StartEvalInput!) { startEval(input: $in) { runId run { ${LABELS} } } }`, {
      in: {
        graphName: 'gridnav_planner',
        episodeCount: 2,
        name: '  eps 0.3 ',
        tags: ['sweep', 'eps', 'sweep', ' '],
        note: 'try more noise',
        overrides: { agent: { epsilon: 0.3 } },
      },
    });
    expect(started.errors).toBeUndefined();
    const runId = started.data!.startEval.runId as string;
    expect(started.data!.startEval.run).toEqual({ id: runId, name: 'eps 0.3', tags: ['sweep', 'eps'], note: 'try more noise' });

    const tooMany = await s.gql(`mutation($in: StartEvalInput!) { startEval(input: $in) { runId } }`, {
      in: { graphName: 'gridnav_planner', episodeCount: 1, tags: Array.from({ length: 33 }, (_, i) => `t${i}`) },
    });
    expect(codeOf(tooMany)).toBe('BAD_USER_INPUT');
    expect(tooMany.errors![0]!.extensions!.field).toBe('tags');

    const ids = async (args: string) =>
      ((await s.gql(`{ runs(${args}) { total items { id } } }`)).data!.runs.items as Array<{ id: string }>).map((r) => r.id);
    expect(await ids('tag: "eps"')).toEqual([runId]);
    expect(await ids('search: "NOISE"')).toEqual([runId]);
    expect(await ids(`search: "${other.slice(0, 10)}"`)).toEqual([other]);
    expect(await ids('tag: "nope"')).toEqual([]);

    // Edit: the name and tags change, the note is kept; then the name is cleared.
    const edited = await s.gql(`mutation($id: ID!) { updateRun(id: $id, name: "eps 0.3 (rerun)", tags: ["final"]) { ${LABELS} } }`, {
      id: runId,
    });
    expect(edited.data!.updateRun).toEqual({ id: runId, name: 'eps 0.3 (rerun)', tags: ['final'], note: 'try more noise' });
    expect(await ids('tag: "final"')).toEqual([runId]);
    expect(await ids('tag: "eps"')).toEqual([]);
    const cleared = await s.gql(`mutation($id: ID!) { updateRun(id: $id, name: null) { ${LABELS} spec } }`, { id: runId });
    expect(cleared.data!.updateRun).toMatchObject({ name: null, tags: ['final'], note: 'try more noise' });
    // The spec is what was submitted; the frozen graph only on request.
    expect(cleared.data!.updateRun.spec).toMatchObject({ name: 'eps 0.3', tags: ['sweep', 'eps'], overrides: { agent: { epsilon: 0.3 } } });
    expect(cleared.data!.updateRun.spec.graph).toBeUndefined();
    const withGraph = await s.gql(`query($id: ID!) { run(id: $id) { spec(withGraph: true) } }`, { id: runId });
    expect(withGraph.data!.run.spec.graph.name).toBe('gridnav_planner');

    const runDir = join(runsRoot(outputsDir), runId);
    expect(JSON.parse(await readFile(join(runDir, LABELS_FILE), 'utf8'))).toMatchObject({ tags: ['final'], note: 'try more noise' });
    expect(JSON.parse(await readFile(join(runDir, FILES.spec), 'utf8'))).toMatchObject({ name: 'eps 0.3' });

    const tooLong = await s.gql(`mutation($id: ID!, $n: String) { updateRun(id: $id, note: $n) { id } }`, {
      id: runId,
      n: 'x'.repeat(10_001),
    });
    expect(codeOf(tooLong)).toBe('BAD_USER_INPUT');
    expect(codeOf(await s.gql(`mutation { updateRun(id: "20990101_000000", name: "x") { id } }`))).toBe('NOT_FOUND');

    await waitFor('the run to finish', async () => {
      const r = await s.gql(`query($id: ID!) { run(id: $id) { status } }`, { id: runId });
      return r.data?.run.status === 'COMPLETED';
    });
    await s.stop();
    // A lost catalog is rebuilt from the run dirs: labels.json wins over the spec.
    await writeFile(join(outputsDir, CATALOG_FILE), 'not json');
    server = await startServer({ outputsDir });
    const again = await server.gql(`{ runs(tag: "final") { items { ${LABELS} } } }`);
    expect(again.data!.runs.items).toEqual([{ id: runId, name: null, tags: ['final'], note: 'try more noise' }]);
  });
});
