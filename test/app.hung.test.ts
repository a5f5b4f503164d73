/**
 * A hung eval process: one stopped with SIGSTOP sends no heartbeat, so the scheduler kills it
 * once its limit passes and the run ends ABORTED with code HUNG, the episodes it finished kept
 * and shown by the API. A process kept busy by CPU-bound env steps beats on and is left alone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { alive, gql, START_EVAL, startServer, waitFor, type TestServer } from './app.helpers.js';
import { groupGone } from './scheduler/harness.js';
import { readRecordsOnDisk } from '../src/store/records-on-disk.js';

const HUNG_MS = 2500;
const GRACE_MS = 500;

let server: TestServer | undefined;
const stoppedPids: number[] = [];

afterAll(async () => {
  for (const pid of stoppedPids) {
    if (!alive(pid)) continue;
    process.kill(pid, 'SIGCONT');
    process.kill(pid, 'SIGKILL');
  }
  await server?.stop();
});

const RUN = `query Run($id: ID!) {
  run(id: $id) { status pid startedAt episodesDone error { code message } episodes(first: 10000) { total items { index status } } }
}`;

interface RunView {
  status: string;
  pid: number | null;
  startedAt: string | null;
  episodesDone: number;
  error: { code: string; message: string } | null;
  episodes: { total: number; items: Array<{ index: number; status: string }> };
}

describe('a hung eval process', () => {
  it('SIGSTOP: the run ends ABORTED (HUNG) within the limit, its finished episodes kept, the process gone', async () => {
    server = await startServer({ scheduler: { evalHungMs: HUNG_MS, cancelGraceMs: GRACE_MS, cores: 64 } });
    const s = server;
    const view = async (id: string): Promise<RunView> => {
      const res = await gql<{ run: RunView }>(s.url, RUN, { id });
      expect(res.errors).toBeUndefined();
      return res.data!.run;
    };
    // CPU-bound steps (step_compute_ms) on the eval process's own thread and on a play lane: busy, not hung.
    const started = await gql<{ startEval: { runId: string } }>(s.url, START_EVAL, {
      input: { graphName: 'gridnav_planner', episodeCount: 400, workerCount: 2, overrides: { env: { step_compute_ms: 5 } } },
    });
    expect(started.errors).toBeUndefined();
    const runId = started.data!.startEval.runId;
    const startedAt = await waitFor('the run to start', async () => (await view(runId)).status === 'RUNNING' && Date.now());
    const busy = await waitFor(
      'the run to have played a few episodes over more than twice the hung limit',
      async () => {
        const v = await view(runId);
        expect(['QUEUED', 'RUNNING']).toContain(v.status);
        return v.status === 'RUNNING' && v.pid !== null && v.episodesDone >= 2 && Date.now() - startedAt > 2 * HUNG_MS ? v : undefined;
      },
      60_000,
    );
    const pid = busy.pid!;
    process.kill(pid, 'SIGSTOP');
    stoppedPids.push(pid);
    const stoppedAt = Date.now();
    const before = (await view(runId)).episodesDone;

    const ended = await waitFor(
      'the run to end',
      async () => {
        const v = await view(runId);
        return v.status !== 'RUNNING' ? v : undefined;
      },
      30_000,
      25,
    );
    const tookMs = Date.now() - stoppedAt;
    expect(ended.status).toBe('ABORTED');
    expect(ended.error).toMatchObject({ code: 'HUNG', message: expect.stringContaining('sent no heartbeat') });
    // Not before the limit (less one heartbeat period), and within it plus a tick, the SIGKILL grace and some slack.
    expect(tookMs).toBeGreaterThanOrEqual(HUNG_MS - 600);
    expect(tookMs).toBeLessThan(HUNG_MS + GRACE_MS + 3000);
    // Every episode it had finished is kept and listed.
    expect(ended.episodesDone).toBeGreaterThanOrEqual(before);
    expect(ended.episodes.total).toBe(ended.episodesDone);
    expect(ended.episodes.items.map((e) => e.index)).toEqual([...new Set(ended.episodes.items.map((e) => e.index))]);
    expect(ended.episodes.items.every((e) => e.status === 'COMPLETED')).toBe(true);
    // Those whose record reached the disk after the last summary write too.
    const onDisk = await readRecordsOnDisk(s.app.scheduler.getRunDir(runId));
    expect(ended.episodes.items.map((e) => e.index)).toEqual(onDisk.map((r) => r.index));
    await waitFor('the stopped process and its group to be gone', () => !alive(pid) && groupGone(pid), 5000);
    expect(s.app.scheduler.activeJobs()).toEqual([]);
  }, 120_000);
});
