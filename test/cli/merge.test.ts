/**
 * `evalctl run --shard k/K` + `evalctl merge` as a user types them: real CLI, real eval
 * processes, real run directories. The merged run must equal a one-machine run of the same
 * spec, timing and worker fields aside; bad sets of partials are refused with one code each.
 */
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import { readSummary } from '../../src/store/run-dir.js';
import type { EpisodeRecord, RunSummary } from '../../src/store/types.js';

const CLI = join(DIST_DIR, 'main.js');
const evalctl = (args: string[]) => execa(process.execPath, [CLI, ...args], { reject: false, env: { ACTIVE_WORKSPACE_DIR: '' } });
const SPEC_FLAGS = ['gridnav_planner', '--episodes', '24', '--shard-size', '6', '--seed', '5', '--step-budget', '12'];

let tmp: string;
let partials: string[];
let one: RunSummary;
let oneDir: string;

const TIMING: (keyof EpisodeRecord)[] = ['workerId', 'durationMs', 'startedAt', 'finishedAt'];
function withoutTiming(s: RunSummary): unknown {
  const { seq: _seq, runId: _id, createdAt: _c, startedAt: _s, finishedAt: _f, ...rest } = s;
  return {
    ...rest,
    episodes: s.episodes.map((e) => Object.fromEntries(Object.entries(e).filter(([k]) => !TIMING.includes(k as keyof EpisodeRecord)))),
  };
}
const onlyRunDir = async (outputs: string) => {
  const [id] = await readdir(join(outputs, 'eval_runs'));
  return join(outputs, 'eval_runs', id!);
};

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'cli-merge-'));
  const runs = await Promise.all([
    ...[1, 2, 3, 4].map((k) => evalctl(['run', ...SPEC_FLAGS, '--shard', `${k}/4`, '--outputs', join(tmp, `p${k}`), '--json'])),
    evalctl(['run', ...SPEC_FLAGS, '--outputs', join(tmp, 'one'), '--json']),
  ]);
  for (const r of runs) expect(r.exitCode, r.stderr).toBe(0);
  partials = await Promise.all([1, 2, 3, 4].map((k) => onlyRunDir(join(tmp, `p${k}`))));
  one = JSON.parse(runs[4]!.stdout) as RunSummary;
  oneDir = await onlyRunDir(join(tmp, 'one'));
}, 120_000);
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('evalctl run --shard + evalctl merge', () => {
  it('a partial holds only its shard, under the run indices, and says so in its spec', async () => {
    const s = await readSummary(partials[1]!);
    expect(s.status).toBe('COMPLETED');
    expect(s.episodes.map((e) => e.index)).toEqual([6, 7, 8, 9, 10, 11]);
    expect(s.episodes.map((e) => e.seed)).toEqual(one.episodes.slice(6, 12).map((e) => e.seed));
    const spec = JSON.parse(await readFile(join(partials[1]!, 'spec.json'), 'utf8'));
    expect(spec.shard).toEqual({ task: 2, of: 4 });
    expect(spec.shardSize).toBe(6);
  });

  it('merging the 4 partials gives the one-machine run, byte for byte apart from timing fields', async () => {
    const r = await evalctl(['merge', ...partials.slice().reverse(), '--out', join(tmp, 'merged'), '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const dir = await onlyRunDir(join(tmp, 'merged'));
    const merged = await readSummary(dir);
    const single = await readSummary(oneDir);
    expect(JSON.stringify(withoutTiming(merged))).toBe(JSON.stringify(withoutTiming(single)));
    expect(merged.status).toBe('COMPLETED');
    expect(merged.episodesDone).toBe(24);
    // The run directory is complete: spec without the shard, graph, every episode's folder, _DONE.
    const spec = JSON.parse(await readFile(join(dir, 'spec.json'), 'utf8'));
    expect(spec.shard).toBeUndefined();
    expect(spec.runId).toBe(merged.runId);
    expect((await readdir(join(dir, 'episodes'))).length).toBe(24);
    expect(await readdir(dir)).toEqual(expect.arrayContaining(['_DONE', 'graph.json', 'manifest.json', 'spec.json', 'summary.json']));
    // The partials were made from the same code and data: the merged run keeps that record (an audit needs it).
    expect(JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'))).toEqual(
      JSON.parse(await readFile(join(partials[0]!, 'manifest.json'), 'utf8')),
    );
    const ep = JSON.parse(await readFile(join(dir, 'episodes', 'ep0013', 'episode.json'), 'utf8')) as EpisodeRecord;
    expect(ep).toEqual(merged.episodes[13]);
  });

  it('refuses partials of different specs, naming the field (MERGE_MISMATCH)', async () => {
    const other = join(tmp, 'other-seed');
    await cp(partials[3]!, other, { recursive: true });
    const spec = JSON.parse(await readFile(join(other, 'spec.json'), 'utf8'));
    await writeFile(join(other, 'spec.json'), JSON.stringify({ ...spec, seed: 6 }));
    const r = await evalctl(['merge', ...partials.slice(0, 3), other, '--out', join(tmp, 'x1')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('not of one run');
    expect(r.stderr).toContain('seed 6');
    await expect(readdir(join(tmp, 'x1'))).rejects.toThrow();
  });

  it('refuses partials of different repeats, and a partial whose nodeset code differed (MERGE_MISMATCH)', async () => {
    const repeated = join(tmp, 'other-repeats');
    await cp(partials[3]!, repeated, { recursive: true });
    const spec = JSON.parse(await readFile(join(repeated, 'spec.json'), 'utf8'));
    await writeFile(join(repeated, 'spec.json'), JSON.stringify({ ...spec, repeats: 2 }));
    const r = await evalctl(['merge', ...partials.slice(0, 3), repeated, '--out', join(tmp, 'x5')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('repeats 2');

    const changed = join(tmp, 'other-code');
    await cp(partials[3]!, changed, { recursive: true });
    const manifest = JSON.parse(await readFile(join(changed, 'manifest.json'), 'utf8'));
    manifest.nodesets[0].codeSha256 = '0'.repeat(64);
    await writeFile(join(changed, 'manifest.json'), JSON.stringify(manifest));
    const c = await evalctl(['merge', ...partials.slice(0, 3), changed, '--out', join(tmp, 'x6')]);
    expect(c.exitCode).toBe(2);
    expect(c.stderr).toContain('made from different nodeset code or dataset files');
    await expect(readdir(join(tmp, 'x6'))).rejects.toThrow();
  });

  it('refuses a partial whose episode folder is gone (MERGE_GAP), leaving nothing behind', async () => {
    const holed = join(tmp, 'holed');
    await cp(partials[1]!, holed, { recursive: true });
    await rm(join(holed, 'episodes', 'ep0007'), { recursive: true });
    const r = await evalctl(['merge', partials[0]!, holed, partials[2]!, partials[3]!, '--out', join(tmp, 'x7')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('episodes 7 have a record but no episode folder');
    await expect(readdir(join(tmp, 'x7'))).rejects.toThrow();
  });

  it('refuses overlapping partials, naming the episodes (MERGE_OVERLAP)', async () => {
    const r = await evalctl(['merge', ...partials, partials[2]!, '--out', join(tmp, 'x2')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('overlap: episodes 12..17 are in both');
  });

  it('refuses partials that leave a gap, naming the episodes (MERGE_GAP)', async () => {
    const r = await evalctl(['merge', partials[0]!, partials[2]!, partials[3]!, '--out', join(tmp, 'x3')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('episodes 6..11 of 0..23 are in no partial');
  });

  it('refuses a --shard with more tasks than the run has shards', async () => {
    const r = await evalctl(['run', ...SPEC_FLAGS, '--shard', '1/5', '--outputs', join(tmp, 'x4')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('only 4 shard(s) of 6 episodes');
  });
});
