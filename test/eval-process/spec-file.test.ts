/**
 * spec.json is parsed with the run-spec schema when the eval process reads it: one that is
 * not a valid spec ends the run FAILED with SPEC_INVALID naming the field, instead of a crash
 * that leaves the run QUEUED or a confusing error from deeper down.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initialSummary } from '../../src/eval-process/summary-writer.js';
import { EVAL_PROCESS_MAIN } from '../../src/paths.js';
import { FILES, createRunDir, isDone, readSummary, writeSummary } from '../../src/store/run-dir.js';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'eval-spec-file-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A queued run dir, as submit leaves it, whose spec.json holds `specText`. */
async function queuedRun(specText: (runId: string) => string): Promise<string> {
  const { runId, dir } = createRunDir(tmp);
  const spec = {
    runId,
    graphName: 'gridnav_planner',
    episodeCount: 2,
    workerCount: 1,
    seed: 0,
    priority: 0,
    createdAt: new Date().toISOString(),
  };
  await writeSummary(dir, { ...initialSummary(spec), seq: 1 });
  await writeFile(join(dir, FILES.spec), specText(runId));
  return dir;
}

describe('a spec.json that is not a valid spec', () => {
  it.each([
    [
      'a field of the wrong type',
      (runId: string) => JSON.stringify({ runId, graphName: 'gridnav_planner', episodeCount: 2, createdAt: 'now', dataset: 5 }),
      /dataset must be a non-empty dataset name/,
    ],
    [
      'an unknown field',
      (runId: string) => JSON.stringify({ runId, graphName: 'gridnav_planner', episodeCount: 2, createdAt: 'now', wokerCount: 4 }),
      /unknown field "wokerCount"/,
    ],
    ['text that is not JSON', () => '{"runId": "x", "graphNa', /is not JSON/],
  ])('(%s) ends the run FAILED with SPEC_INVALID naming what is wrong; exit 1', async (_what, specText, message) => {
    const dir = await queuedRun(specText);
    const r = await execa(process.execPath, [EVAL_PROCESS_MAIN, '--run-dir', dir], { reject: false, stdin: 'ignore' });
    expect(r.exitCode).toBe(1);
    const summary = await readSummary(dir);
    expect(summary.status).toBe('FAILED');
    expect(summary.error?.code).toBe('SPEC_INVALID');
    expect(summary.error?.message).toMatch(/^spec\.json of run \d{8}_\d{6}(_\d+)? (is not a valid run spec|is not JSON)/);
    expect(summary.error?.message).toMatch(message);
    expect(summary.finishedAt).not.toBeNull();
    expect(isDone(dir)).toBe(true);
    expect(r.stdout).toMatch(/run failed: spec\.json of run/);
  });
});
