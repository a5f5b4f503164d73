/**
 * `evalctl run --server`: the run is queued on a real server and followed over its
 * subscription; a full queue is waited out with --wait-for-room (startEval's waitForRoomSec)
 * or refused with QUEUE_FULL at once without it.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import type { RunSummary } from '../../src/store/types.js';
import { codeOf, START_EVAL, startServer, type TestServer, waitFor } from '../app.helpers.js';

const CLI = join(DIST_DIR, 'main.js');
const TOKEN = 'remote-run-token';
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ token: TOKEN, scheduler: { queueCapacity: 1 } });
});
afterAll(async () => {
  await server?.stop();
});

const evalctl = (args: string[]) =>
  execa(process.execPath, [CLI, 'run', 'gridnav_planner', '--episodes', '2', '--dataset', 'mini', ...args], {
    reject: false,
    env: { ACTIVE_WORKSPACE_DIR: '', EVAL_API_TOKEN: TOKEN },
  });
const auth = { authorization: `Bearer ${TOKEN}` };

describe('evalctl run --server', { timeout: 60_000 }, () => {
  it('queues the run on the server, follows it to the end and prints its summary', async () => {
    const r = await evalctl(['--server', `${server.url}/graphql`, '--json', '--seed', '4']);
    expect(r.exitCode, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as RunSummary;
    expect(summary).toMatchObject({ status: 'COMPLETED', episodesDone: 2, seed: 4, graphName: 'gridnav_planner' });
    const listed = await server.gql(`query($id: ID!) { run(id: $id) { id status seed } }`, { id: summary.runId }, auth);
    expect(listed.data!.run).toEqual({ id: summary.runId, status: 'COMPLETED', seed: 4 });
    const wrong = await execa(
      process.execPath,
      [CLI, 'run', 'gridnav_planner', '--episodes', '1', '--server', server.url, '--token', 'nope'],
      {
        reject: false,
      },
    );
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toMatch(/UNAUTHENTICATED|token/);
  });

  it('a full queue: QUEUE_FULL at once, or waited out with --wait-for-room / waitForRoomSec', async () => {
    const scheduler = server.app.scheduler;
    // Counts the refused submits (passing every call through), so the test knows when the CLI is waiting.
    const submit = scheduler.submit.bind(scheduler);
    let refusals = 0;
    scheduler.submit = (fields) =>
      submit(fields).catch((err: unknown) => {
        refusals++;
        throw err;
      });
    const release = scheduler.acquireInteractiveLock('test: hold admission');
    const first = await server.gql(START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 1 } }, auth);
    const blocker = first.data!.startEval.runId as string;
    const refused = await evalctl(['--server', server.url]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/queue is full/);
    const waitedOut = await server.gql(START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 1, waitForRoomSec: 0.2 } }, auth);
    expect(codeOf(waitedOut)).toBe('QUEUE_FULL');
    const bad = await server.gql(START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 1, waitForRoomSec: -1 } }, auth);
    expect(bad.errors![0]!.message).toMatch(/waitForRoomSec must be a number of seconds/);

    const before = refusals;
    const waiting = evalctl(['--server', server.url, '--wait-for-room', '60', '--json']);
    await waitFor('the CLI submit to be refused once and waiting', () => refusals > before, 30_000);
    // Room comes when the blocker is cancelled; the waiting submit is queued then and runs once admission resumes.
    await server.gql(`mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: blocker }, auth);
    release();
    const r = await waiting;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'COMPLETED', episodesDone: 2 });
  });
});
