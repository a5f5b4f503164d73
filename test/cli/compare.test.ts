/** `evalctl compare` and `evalctl plan` over run directories written by hand (no eval process needed). */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPlan } from '../../src/cli/plan.js';
import { episodesForEffect } from '../../src/stats/power.js';
import type { EpisodeRecord } from '../../src/store/types.js';
import { scoredRecord, writeDatasetManifest, writeScoredRun } from '../support/scored-run.js';

const MAIN = resolve(import.meta.dirname, '../../dist/main.js');
let dir: string;
let outputs: string;
const ids: Record<string, string> = {};

function record(index: number, success: number, offset = 0): EpisodeRecord {
  return {
    index,
    episodeId: `gridnav/standard/val/${index + offset}`,
    status: success ? 'COMPLETED' : 'BUDGET_EXHAUSTED',
    steps: 10,
    metrics: { success, spl: success * 0.8 },
    seed: index,
    workerId: 0,
    durationMs: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:00.000Z',
    stepBudget: 60,
    assets: [],
  };
}

async function writeRun(at: Date, episodes: EpisodeRecord[], into = outputs): Promise<string> {
  const { runId } = await writeScoredRun(into, at, episodes, (summary) => {
    summary.graphName = 'gridnav_planner';
  });
  return runId;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-compare-'));
  outputs = join(dir, 'outputs');
  // Baseline succeeds on 3 of every 4 episodes; the candidate loses episodes 1 and 5 and gains 3.
  const base = Array.from({ length: 12 }, (_, i) => record(i, i % 4 === 3 ? 0 : 1));
  const cand = base.map((r) => record(r.index, [1, 5].includes(r.index) ? 0 : r.index === 3 ? 1 : (r.metrics.success as number)));
  ids.base = await writeRun(new Date(2026, 0, 1, 0, 0, 0), base);
  ids.cand = await writeRun(new Date(2026, 0, 1, 0, 0, 1), cand);
  ids.apart = await writeRun(new Date(2026, 0, 1, 0, 0, 2), [record(0, 1, 500)]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('evalctl compare', () => {
  it('prints the paired table and the flipped episodes', async () => {
    const r = await execa('node', [MAIN, 'compare', ids.base!, ids.cand!, '--outputs', outputs], { reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${ids.cand} − ${ids.base} (baseline): 12 shared episodes`);
    expect(r.stdout).toMatch(/success\s+12\s+0\.7500\s+0\.6667\s+-0\.0833\s+\[/);
    expect(r.stdout).toContain('1/9/2');
    expect(r.stdout).toContain('success flipped on 3 episode(s) (gained 1, lost 2):');
    expect(r.stdout).toContain('- gridnav/standard/val/1  baseline #1 → candidate #1');
    expect(r.stdout).toContain('+ gridnav/standard/val/3  baseline #3 → candidate #3');
  });

  it('prints JSON, and refuses runs that share no episode (exit 2)', async () => {
    const j = await execa('node', [MAIN, 'compare', ids.base!, ids.cand!, '--metric', 'success', '--json', '--outputs', outputs]);
    const cmp = JSON.parse(j.stdout);
    expect(cmp.metrics).toEqual(['success']);
    expect(cmp.candidates[0].metrics[0]).toMatchObject({ wins: 1, losses: 2, ties: 9, mcnemarP: 1 });
    const apart = await execa('node', [MAIN, 'compare', ids.base!, ids.apart!, '--outputs', outputs], { reject: false });
    expect(apart.exitCode).toBe(2);
    expect(apart.stderr).toContain('share no episode');
    const unknown = await execa('node', [MAIN, 'compare', ids.base!, '20000101_000000', '--outputs', outputs], { reject: false });
    expect(unknown.exitCode).toBe(2);
  });

  it('warns, as compareRuns does, when the runs differ beyond their config (text and --json)', async () => {
    // Its own outputs folder: `plan` above looks for the latest comparable run in the shared one.
    const own = join(dir, 'warned');
    const base = Array.from({ length: 4 }, (_, i) => record(i, i % 2));
    const a = await writeRun(new Date(2026, 0, 2, 0, 0, 0), base, own);
    const b = await writeRun(new Date(2026, 0, 2, 0, 0, 1), base, own);
    await writeDatasetManifest(join(own, 'eval_runs', a), { 'test.jsonl': 'a'.repeat(64), 'meta.json': 'c'.repeat(64) });
    await writeDatasetManifest(join(own, 'eval_runs', b), { 'test.jsonl': 'b'.repeat(64), 'meta.json': 'c'.repeat(64) });
    const text = await execa('node', [MAIN, 'compare', a, b, '--outputs', own], { reject: false });
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain(`${b} − ${a} (baseline): 4 shared episodes\n  warning: dataset chg: files differ (test.jsonl)\n`);
    const json = JSON.parse((await execa('node', [MAIN, 'compare', a, b, '--json', '--outputs', own])).stdout);
    expect(json.candidates[0].warnings).toEqual(['dataset chg: files differ (test.jsonl)']);
    // Runs without a manifest differ in nothing it could tell: no warning, an empty list.
    const plain = await execa('node', [MAIN, 'compare', ids.base!, ids.cand!, '--json', '--outputs', outputs]);
    expect(JSON.parse(plain.stdout).candidates[0].warnings).toEqual([]);
  });

  it('prints runs near the largest double: repeats of 1e308 average to 1e308, and a difference beyond a double is – with a note (text and --json)', async () => {
    // Its own outputs folder, as above. Two plays of each episode: 1e308 + 1e308 overflows the plain sum of the repeats.
    const own = join(dir, 'huge');
    const plays = (sign: number) =>
      [0, 1, 2, 3, 4, 5].map((i) => scoredRecord(i, { big: sign * 1e308, success: i % 2 }, `d/test/${i >> 1}`));
    const a = (await writeScoredRun(own, new Date(2026, 0, 3, 0, 0, 0), plays(1))).runId;
    const b = (await writeScoredRun(own, new Date(2026, 0, 3, 0, 0, 1), plays(-1))).runId;
    const text = await execa('node', [MAIN, 'compare', a, b, '--outputs', own], { reject: false });
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `${b} − ${a} (baseline): 3 shared episodes; big: candidate − baseline goes beyond what a double holds (±1.8e308), so the statistics that do not fit are null\n`,
    );
    expect(text.stdout).toMatch(/big\s+3\s+1e\+308\s+-1e\+308\s+–\s+\[–, –\]\s+\[–, –\]\s+–\s+0\.0e\+0 t\s+0\/0\/3/);
    expect(text.stdout).toMatch(/success\s+3\s+0\.5000\s+0\.5000\s+\+0\.0000/);
    const json = JSON.parse((await execa('node', [MAIN, 'compare', a, b, '--json', '--outputs', own])).stdout);
    expect(json.candidates[0].metrics[0]).toMatchObject({
      metric: 'big',
      baselineMean: 1e308,
      candidateMean: -1e308,
      meanDiff: null,
      ci95: [null, null],
      losses: 3,
    });
  });

  it('refuses a run given twice (exit 2, naming it), by id or by its directory', async () => {
    const twice = await execa('node', [MAIN, 'compare', ids.base!, ids.cand!, ids.cand!, '--outputs', outputs], { reject: false });
    expect(twice.exitCode).toBe(2);
    expect(twice.stderr).toContain(`run ${ids.cand} is given twice`);
    expect(twice.stdout).toBe('');
    const asDir = await execa('node', [MAIN, 'compare', ids.base!, join(outputs, 'eval_runs', ids.base!), '--outputs', outputs], {
      reject: false,
    });
    expect(asDir.exitCode).toBe(2);
    expect(asDir.stderr).toContain(`run ${ids.base} is given twice`);
  });

  it('prints --json with exactly the fields docs/statistics.md lists for it', async () => {
    const j = await execa('node', [MAIN, 'compare', ids.base!, ids.cand!, '--json', '--outputs', outputs]);
    const keys = new Set<string>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v !== null && typeof v === 'object')
        for (const [k, x] of Object.entries(v)) {
          keys.add(k);
          walk(x);
        }
    };
    walk(JSON.parse(j.stdout));
    const doc = await readFile(resolve(import.meta.dirname, '../../docs/statistics.md'), 'utf8');
    const block = doc.split('### The JSON of `evalctl compare`')[1]!.split('```')[1]!;
    // Field names: a word before , : } or ?; lo, hi and null are the interval's placeholders.
    const documented = new Set(
      [...block.matchAll(/(\w+)\??(?=\s*[,:}?])/g)].map((m) => m[1]!).filter((w) => !['lo', 'hi', 'null'].includes(w)),
    );
    // These runs carry no clusters: the one optional field is absent.
    documented.delete('clusters');
    expect([...keys].sort()).toEqual([...documented].sort());
  });

  it('takes the run directories `evalctl run` prints as well as run ids, and names an argument that is neither', async () => {
    const byDir = await execa(
      'node',
      [MAIN, 'compare', join(outputs, 'eval_runs', ids.base!), `${join(outputs, 'eval_runs', ids.cand!)}/`],
      {
        cwd: dir,
        reject: false,
      },
    );
    expect(byDir.exitCode, byDir.stderr).toBe(0);
    expect(byDir.stdout).toContain(`${ids.cand} − ${ids.base} (baseline): 12 shared episodes`);
    const plan = await execa('node', [MAIN, 'plan', join(outputs, 'eval_runs', ids.cand!), '--metric', 'success'], {
      cwd: dir,
      reject: false,
    });
    expect(plan.exitCode, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(`paired against ${ids.base}`);
    const neither = await execa('node', [MAIN, 'compare', ids.base!, 'nothere', '--outputs', outputs], { reject: false });
    expect(neither.exitCode).toBe(2);
    expect(neither.stderr).toContain('"nothere" is neither a run id (YYYYMMDD_HHMMSS or YYYYMMDD_HHMMSS_N) nor a run directory');
  });
});

describe('evalctl plan', () => {
  it('plans from the paired spread against the latest comparable run', async () => {
    const r = await execa('node', [MAIN, 'plan', ids.cand!, '--effect', '0.1', '--metric', 'success', '--outputs', outputs], {
      reject: false,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`paired against ${ids.base}`);
    expect(r.stdout).toMatch(new RegExp(`success\\s+${ids.base}\\s+12\\s+\\d\\.\\d{4}\\s+\\d\\.\\d{4}\\s+0\\.1000\\s+\\d+`));
    const bad = await execa('node', [MAIN, 'plan', ids.cand!, '--effect', '0', '--outputs', outputs], { reject: false });
    expect(bad.exitCode).toBe(2);
  });

  it('takes --reference and an effect per metric, absolute or relative, and names the reference', async () => {
    const r = await execa(
      'node',
      [MAIN, 'plan', ids.cand!, '--reference', ids.base!, '--effect', 'success=10%', '--effect', 'spl=0.2', '--json', '--outputs', outputs],
      { reject: false },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    const byName = Object.fromEntries(plan.metrics.map((m: { metric: string }) => [m.metric, m]));
    // 10 % of the reference's success rate, 0.75.
    expect(byName.success).toMatchObject({ referenceRunId: ids.base, relativeEffect: 0.1, designEffect: 1 });
    expect(byName.success.effect).toBeCloseTo(0.075, 15);
    expect(byName.spl).toMatchObject({ referenceRunId: ids.base, effect: 0.2 });
    const text = await execa('node', [MAIN, 'plan', ids.cand!, '--reference', ids.base!, '--outputs', outputs]);
    expect(text.stdout).toContain(`paired against ${ids.base} (--reference)`);
    const apart = await execa('node', [MAIN, 'plan', ids.cand!, '--reference', ids.apart!, '--outputs', outputs], { reject: false });
    expect(apart.exitCode).toBe(2);
    expect(apart.stderr).toContain('shares no episode');
    const bad = await execa('node', [MAIN, 'plan', ids.cand!, '--effect', 'success=abc', '--outputs', outputs], { reject: false });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--effect "success=abc"');
  });

  it('says when the episodes needed are more than one run takes', () => {
    const text = renderPlan({
      runId: 'r',
      source: 'own',
      metrics: [
        { metric: 'success', n: 40, sd: 0.5, designEffect: 1, mde: 0.2, effect: 0.001, episodesNeeded: 1_732_921 },
        { metric: 'spl', n: 40, sd: 0.1, designEffect: 1, mde: 0.05, effect: 0.001, episodesNeeded: 80_000 },
      ],
    });
    expect(text).toContain('success: more episodes than one run takes (100000)');
    expect(text).not.toContain('spl: more episodes');
  });

  it('says when a metric has no spread, and never plans fewer than two episodes', () => {
    const text = renderPlan({
      runId: 'r',
      source: 'paired',
      referenceRunId: 'q',
      metrics: [
        {
          metric: 'success',
          n: 40,
          sd: 0,
          designEffect: 1,
          referenceRunId: 'q',
          mde: 0,
          effect: 0.1,
          episodesNeeded: episodesForEffect(0, 0.1),
        },
      ],
    });
    expect(text).toMatch(/success\s+q\s+40\s+0\.0000\s+0\.0000\s+0\.1000\s+2\n/);
    expect(text).toContain('success: sd 0 (the same difference on every shared episode)');
  });

  it('refuses a metric the runs do not report, listing those they do (compare too)', async () => {
    const plan = await execa('node', [MAIN, 'plan', ids.cand!, '--metric', 'sucess', '--outputs', outputs], { reject: false });
    expect(plan.exitCode).toBe(2);
    expect(plan.stderr).toMatch(/metric "sucess" is not reported by these runs; they report .*\bsuccess\b/);
    const compare = await execa('node', [MAIN, 'compare', ids.base!, ids.cand!, '--metric', 'nope', '--outputs', outputs], {
      reject: false,
    });
    expect(compare.exitCode).toBe(2);
    expect(compare.stderr).toContain('metric "nope" is not reported by these runs');
  });
});

describe('clustered dataset runs', () => {
  // The dataset of test/compare/clustered-inference.test.ts (80 samples in 5 clusters; the candidate solves clusters 3 and 4), as run directories: the numbers come through summary.json and the score index, against the same statsmodels/scipy output pasted there.
  const k = (i: number) => i % 5;
  const baseSuccess = (i: number) => ((i * 37 + 11) % 17 < 3 + 2 * k(i) ? 1 : 0);
  const rec = (i: number, success: number, steps: number): EpisodeRecord => ({
    ...record(i, success),
    episodeId: `qa/test/${i}`,
    metrics: { success, steps },
    cluster: `c${k(i)}`,
  });
  const baseSteps = (i: number) => 10 + 3 * k(i) + ((i * 13) % 7);

  it('compare, plan and the run table give the clustered figures', async () => {
    const out = join(dir, 'clustered');
    const base = Array.from({ length: 80 }, (_, i) => rec(i, baseSuccess(i), baseSteps(i)));
    const cand = Array.from({ length: 80 }, (_, i) =>
      rec(i, k(i) >= 3 ? 1 : baseSuccess(i), baseSteps(i) - (k(i) % 3) + ((i * 5) % 4) - 1.5),
    );
    const a = await writeRun(new Date(2026, 0, 2, 0, 0, 0), base, out);
    const b = await writeRun(new Date(2026, 0, 2, 0, 0, 1), cand, out);
    const j = await execa('node', [MAIN, 'compare', a, b, '--json', '--outputs', out]);
    const rows = Object.fromEntries(JSON.parse(j.stdout).candidates[0].metrics.map((m: { metric: string }) => [m.metric, m]));
    expect(rows.success).toMatchObject({ testMethod: 'mcnemar-clustered', clusters: 5 });
    expect(rows.success.testP).toBeCloseTo(0.16151331846753808, 12);
    expect(rows.success.bhAdjustedP).toBeCloseTo(0.16151331846753808, 12);
    expect(rows.success.pairedStderr).toBeCloseTo(0.10897247358851682, 12);
    expect(rows.success.unpairedStderr).toBeCloseTo(0.1916213714594486, 12);
    expect(rows.success.mde).toBeCloseTo(0.30529567118679457, 12);
    expect(rows.steps).toMatchObject({ testMethod: 'clustered-t', ciMethod: 'clustered-t', df: 4 });
    expect(rows.steps.testP).toBeCloseTo(0.09930068321372679, 12);
    expect(rows.steps.unpairedCi95[0]).toBeCloseTo(-7.8782245629617185, 11);
    expect(rows.steps.mde).toBeCloseTo(1.048257202602907, 12);
    const text = await execa('node', [MAIN, 'compare', a, b, '--outputs', out]);
    expect(text.stdout).toContain('mcnemar (clustered)');
    const p = await execa('node', [MAIN, 'plan', b, '--effect', 'success=0.1', '--effect', 'steps=-5%', '--json', '--outputs', out]);
    const plan = Object.fromEntries(JSON.parse(p.stdout).metrics.map((m: { metric: string }) => [m.metric, m]));
    expect(plan.success).toMatchObject({ referenceRunId: a, clusters: 5, episodesNeeded: 746 });
    expect(plan.steps).toMatchObject({ referenceRunId: a, episodesNeeded: 98 });
    const pt = await execa('node', [MAIN, 'plan', b, '--outputs', out]);
    expect(pt.stdout).toMatch(/success\s+\S+\s+80\s+0\.3824\s+6\.4978\s+5\s+0\.3053/);
  });
});
