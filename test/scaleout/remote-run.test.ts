/**
 * RemoteRun, the head's ledger of a run on the fleet: a shard's state follows what was
 * committed (COMPLETED once every episode is, also when its taker had nothing left to play) and
 * what the queue says (WAITING again once its job is back on the queue), and
 * a shard reported complete with episodes missing, or failed for good on the queue, ends the run
 * FAILED (SHARD_FAILED) with its committed episodes kept instead of leaving it RUNNING.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RemoteRun } from '../../src/scaleout/remote-run.js';
import type { EpisodeRecord, RunSpec, RunSummary } from '../../src/store/types.js';

const spec = {
  runId: 'r1',
  graphName: 'g',
  episodeCount: 4,
  shardSize: 2,
  workerCount: 1,
  seed: 0,
  priority: 0,
  createdAt: '2026-01-01T00:00:00.000Z',
} as unknown as RunSpec;

const record = (index: number): EpisodeRecord => ({
  index,
  episodeId: `e/${index}`,
  status: 'COMPLETED',
  steps: 3,
  metrics: { score: index },
  seed: index,
  workerId: 0,
  durationMs: 1,
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:00.001Z',
  stepBudget: 10,
  assets: [],
});
const files = (index: number) => [{ path: 'episode.json', data: Buffer.from(JSON.stringify(record(index))).toString('base64') }];

let dir: string;
let ended: RunSummary[];
let opened: RemoteRun[];
const open = async () => {
  const run = await RemoteRun.open(spec, dir, { onProgress: () => {}, onEnd: (s) => ended.push(s) });
  opened.push(run);
  return run;
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'remote-run-'));
  ended = [];
  opened = [];
});
afterEach(async () => {
  // Ended, a run writes no more progress into the dir being removed.
  for (const run of opened) await run.end('CANCELLED');
  await rm(dir, { recursive: true, force: true });
});

describe('RemoteRun', () => {
  it("an audit's scratch run waits for its sample only: a shard the sample misses is done from the start, other episodes are refused", async () => {
    const audit = { ...spec, runId: 'r2', episodeCount: 6, audit: { of: 'r0', indices: [1, 4] } } as RunSpec;
    const run = await RemoteRun.open(audit, dir, { onProgress: () => {}, onEnd: (s) => ended.push(s) });
    opened.push(run);
    expect(run.shards.map((x) => x.state)).toEqual(['WAITING', 'COMPLETED', 'WAITING']);
    await expect(run.commit(0, 0, files(0))).rejects.toThrow('episode 0 is not in the sample run r2 plays');
    await run.commit(0, 1, files(1));
    expect(run.ended).toBe(false);
    await run.commit(2, 4, files(4));
    expect(run.ended).toBe(true);
    expect(ended[0]).toMatchObject({ status: 'COMPLETED', episodesDone: 2 });
    expect(ended[0]!.episodes.map((e) => e.index)).toEqual([1, 4]);
  });

  it('a run whose shards committed an INFRA_ERROR play ends FAILED with INFRA_ERRORS over all its plays', async () => {
    const run = await open();
    const lost = { ...record(2), status: 'INFRA_ERROR' as const, error: 'connection refused at http://127.0.0.1:9/v1' };
    await run.commit(0, 0, files(0));
    await run.commit(0, 1, files(1));
    await run.commit(1, 2, [{ path: 'episode.json', data: Buffer.from(JSON.stringify(lost)).toString('base64') }]);
    await run.commit(1, 3, files(3));
    expect(ended[0]).toMatchObject({
      status: 'FAILED',
      episodesDone: 4,
      error: {
        code: 'INFRA_ERRORS',
        message: '1 of 4 plays ended INFRA_ERROR; the first, play 2: connection refused at http://127.0.0.1:9/v1',
      },
    });
  });

  it('a shard claimed with every episode committed reads COMPLETED once its worker says so', async () => {
    const run = await open();
    await run.commit(0, 0, files(0));
    await run.commit(0, 1, files(1));
    run.claim(0, 'w2');
    await run.shardEnded(0, 'COMPLETED', null);
    expect(run.shards[0]).toMatchObject({ state: 'COMPLETED', committed: 2, attempts: 1, worker: 'w2' });
    expect(run.ended).toBe(false);
  });

  it('a shard back on the queue reads WAITING again, unless a worker claimed it since the hand-back was seen or it is complete', async () => {
    const run = await open();
    run.claim(0, 'w1');
    expect(run.shardReturned(0, 1)).toBe(true);
    expect(run.shards[0]).toMatchObject({ state: 'WAITING', worker: 'w1', attempts: 1 });
    // Seen at one claim, read after the next: the shard is on w2 now.
    const seen = run.shards[0]!.attempts;
    run.claim(0, 'w2');
    expect(run.shardReturned(0, seen)).toBe(false);
    expect(run.shards[0]).toMatchObject({ state: 'RUNNING', worker: 'w2', attempts: 2 });
    await run.commit(0, 0, files(0));
    await run.commit(0, 1, files(1));
    run.shardReturned(0, 2);
    expect(run.shards[0]!.state).toBe('COMPLETED');
  });

  it('a copy of an episode being committed is answered once the first is written: a worker told "already committed" can end its shard', async () => {
    const run = await open();
    const first = run.commit(0, 0, files(0));
    const copy = run.commit(0, 0, files(0)).then((committed) => ({ committed, held: run.committedIn(0) }));
    expect(await first).toBe(true);
    expect(await copy).toEqual({ committed: false, held: [0] });
  });

  it('a shard its worker reports COMPLETED with an episode missing ends the run FAILED, the committed episodes kept', async () => {
    const run = await open();
    run.claim(1, 'w1');
    await run.commit(1, 2, files(2));
    await run.shardEnded(1, 'COMPLETED', null);
    expect(ended).toHaveLength(1);
    expect(ended[0]!.status).toBe('FAILED');
    expect(ended[0]!.error?.code).toBe('SHARD_FAILED');
    expect(ended[0]!.error?.message).toMatch(/shard 1 \(episodes 2\.\.3\).*episode\(s\) 3/);
    expect(ended[0]!.episodes.map((e) => e.index)).toEqual([2]);
    expect(run.shards.map((s) => s.state)).toEqual(['CANCELLED', 'FAILED']);
    const onDisk = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
    expect(onDisk.status).toBe('FAILED');
  });

  it('an episode in the run directory that this ledger did not commit (written across a head restart) counts when its shard reports COMPLETED', async () => {
    const run = await open();
    await run.commit(0, 0, files(0));
    await run.commit(0, 1, files(1));
    await run.commit(1, 2, files(2));
    // Episode 3 reached the directory by another head's hand, not through this ledger.
    await mkdir(join(dir, 'episodes', 'ep0003'), { recursive: true });
    await writeFile(join(dir, 'episodes', 'ep0003', 'episode.json'), JSON.stringify(record(3)));
    await run.shardEnded(1, 'COMPLETED', null);
    expect(run.shards[1]!.state).toBe('COMPLETED');
    expect(ended[0]).toMatchObject({ status: 'COMPLETED', episodesDone: 4 });
  });

  it('a shard failed for good on the queue ends the run FAILED naming it; a complete shard failing later changes nothing', async () => {
    const run = await open();
    await run.commit(0, 0, files(0));
    await run.commit(0, 1, files(1));
    await run.shardFailed(0, 'too late');
    expect(run.ended).toBe(false);
    await run.shardFailed(1, '/scaleout/claim: the head cannot be reached');
    expect(ended[0]!.error).toMatchObject({ code: 'SHARD_FAILED' });
    expect(ended[0]!.error?.message).toContain('shard 1 (episodes 2..3) failed for good on the scale-out workers: /scaleout/claim');
    expect(ended[0]!.episodesDone).toBe(2);
  });
});
