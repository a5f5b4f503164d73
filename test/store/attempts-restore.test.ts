/**
 * A retry that ends before it plays what it was to play (cancelled while queued, killed, stopped)
 * puts the earlier records of those episodes back: the run never shows fewer episodes than it measured.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import { attemptOfIndex, prepareRetry, readAttempts, restoreUnplayed, retriedEpisodesOf } from '../../src/store/attempts.js';
import { readSummary, runDirPath } from '../../src/store/run-dir.js';
import type { RunSummary } from '../../src/store/types.js';
import { crashingRun } from '../support/crashing-run.js';

const MAIN = join(DIST_DIR, 'main.js');

describe('restoreUnplayed', () => {
  let tmp: string;
  let runDir: string;
  let before: RunSummary;
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'attempts-restore-'));
    const outputs = join(tmp, 'outputs');
    // Three episodes whose env crashes at step 2: three CRASHED records, each with its folder.
    before = await crashingRun(outputs, 3);
    expect(before.statusCounts).toEqual({ CRASHED: 3 });
    runDir = runDirPath(outputs, before.runId);
  }, 60_000);
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('puts back the records and folders of the episodes a retry did not play, and says whose they are', async () => {
    const prepared = await prepareRetry(runDir, ['CRASHED']);
    expect(prepared.summary.episodes).toEqual([]);
    expect(existsSync(join(runDir, 'episodes', 'ep0001'))).toBe(false);

    // The attempt played episode 0 only, then ended.
    const played = { ...before.episodes[0]!, status: 'COMPLETED' as const };
    const restored = (await restoreUnplayed(runDir, { ...prepared.summary, episodes: [played], episodesDone: 1 }))!;
    expect(restored.episodes).toEqual([played, before.episodes[1], before.episodes[2]]);
    expect(restored.episodesDone).toBe(3);
    expect(restored.statusCounts).toEqual({ COMPLETED: 1, CRASHED: 2 });
    for (const ep of ['ep0001', 'ep0002']) {
      expect(JSON.parse(await readFile(join(runDir, 'episodes', ep, 'episode.json'), 'utf8'))).toEqual(
        JSON.parse(await readFile(join(runDir, 'attempts', '1', 'episodes', ep, 'episode.json'), 'utf8')),
      );
    }
    const file = await readAttempts(runDir);
    expect(file!.attempts[1]!.restored).toEqual([1, 2]);
    // Episode 0 is attempt 2's; 1 and 2 still attempt 1's, and a next retry says so.
    expect([0, 1, 2].map(attemptOfIndex(file))).toEqual([2, 1, 1]);
    expect(retriedEpisodesOf(file, restored.episodes).map((e) => e.attempt)).toEqual([2, 1, 1]);
    // Nothing more to put back the second time.
    expect(await restoreUnplayed(runDir, restored)).toBeNull();
  });

  it('evalctl retry ends a retry that was killed before it played anything with the earlier records back, then plays them', async () => {
    await prepareRetry(runDir, ['CRASHED']);
    // Left RUNNING by an eval process that is gone (SIGKILLed before its first episode).
    const gone = execa(process.execPath, ['-e', '']);
    await gone;
    const left = { ...(await readSummary(runDir)), status: 'RUNNING' as const, pid: gone.pid! };
    await writeFile(join(runDir, 'summary.json'), JSON.stringify(left));
    await rm(join(runDir, '_DONE'), { force: true });

    const again = await execa(process.execPath, [MAIN, 'retry', runDir, '--endings', 'crashed', '--json'], { reject: false });
    expect(again.stderr).toContain('marked ABORTED, its 3 finished episode(s) kept');
    expect(again.stderr).toContain('attempt 3 plays 3 episode(s) again (3 CRASHED)');
    // The archive holds the attempt's summary.json and records.jsonl as it left them.
    const archived = await readSummary(join(runDir, 'attempts', '2'));
    expect(archived).toMatchObject({ status: 'ABORTED', episodesDone: 3 });
    expect(archived.episodes).toEqual(before.episodes);
  }, 60_000);
});
