/**
 * stopWhen on real gridnav runs through evalctl: ε 0.1 against an ε 0.3 baseline stops decided
 * well before its 500-episode budget, at the same episode on 1 and 8 workers, with the same
 * statistics (the prefix of the seeded order); an A/A pair never decides superiority.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededOrder } from '../../src/eval-process/seeded-order.js';
import type { RunSummary } from '../../src/store/types.js';

const MAIN = resolve(import.meta.dirname, '../../dist/main.js');
let outputs: string;
let baseline: string;

async function run(args: string[]): Promise<RunSummary> {
  const r = await execa('node', [MAIN, 'run', 'gridnav_planner', '--outputs', outputs, '--json', ...args], { reject: false });
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as RunSummary;
}

beforeAll(async () => {
  outputs = await mkdtemp(join(tmpdir(), 'early-stop-'));
  baseline = (await run(['--episodes', '500', '--workers', '4', '--set', 'agent.epsilon=0.3'])).runId;
}, 120_000);
afterAll(async () => {
  await rm(outputs, { recursive: true, force: true });
});

describe('stopWhen', () => {
  it('stops a clearly better run once decided, at the same episode on 1 and 8 workers', async () => {
    const args = ['--max-episodes', '500', '--set', 'agent.epsilon=0.1', '--stop-when', 'decided', '--against', baseline];
    const one = await run([...args, '--require', 'spl > 0', '--workers', '1']);
    const eight = await run([...args, '--require', 'spl > 0', '--workers', '8']);
    for (const s of [one, eight]) {
      expect(s.status).toBe('COMPLETED');
      expect(s.stopWhen?.stopped?.reason).toBe('decided');
      expect(s.stopWhen?.verdict).toBe('pass');
      expect(s.stopWhen?.against).toBe(baseline);
    }
    const at = one.stopWhen!.stopped!.atEpisode;
    expect(eight.stopWhen!.stopped!.atEpisode).toBe(at);
    expect(at).toBeLessThan(250);
    expect(one.stopWhen!.stopped).toMatchObject({ planned: 500, saved: 500 - at });
    // The counted plays are exactly the first `at` of the seeded order; anything else played ended CANCELLED.
    const prefix = seededOrder(500, 0)
      .slice(0, at)
      .sort((a, b) => a - b);
    for (const s of [one, eight]) {
      const counted = s.episodes.filter((r) => r.status !== 'CANCELLED').map((r) => r.index);
      expect(counted).toEqual(prefix);
      expect(s.episodesDone).toBeLessThan(500);
    }
    // The statistics are the prefix's; only the count of plays cancelled past it depends on the workers.
    const stats = (x: RunSummary) => x.aggregateMetrics.map(({ excluded: _, ...m }) => m);
    expect(stats(eight)).toEqual(stats(one));
    expect(eight.stopWhen!.interval).toEqual(one.stopWhen!.interval);
    // The baseline was frozen into the run directory: the eval process needed no other run.
    const frozen = JSON.parse(await readFile(join(outputs, 'eval_runs', one.runId, 'baseline-scores.json'), 'utf8')) as {
      runId: string;
      episodes: unknown[];
    };
    expect(frozen.runId).toBe(baseline);
    expect(frozen.episodes).toHaveLength(500);
  }, 120_000);

  it('never decides superiority on an A/A pair: it runs to its budget inconclusive', async () => {
    const s = await run(
      ['--max-episodes', '200', '--workers', '2', '--seed', '7', '--set', 'agent.epsilon=0.3', '--stop-when', 'decided'].concat([
        '--against',
        baseline,
        '--require',
        'spl > 0',
      ]),
    );
    expect(s.stopWhen?.read).toBe(200);
    expect(s.stopWhen?.stopped?.reason).toBe('budget');
    expect(s.stopWhen?.verdict).toBe('inconclusive');
    const [lo, hi] = s.stopWhen!.interval!;
    expect(lo).toBeLessThan(0);
    expect(hi).toBeGreaterThan(0);
  }, 120_000);

  it('stops a run without a baseline once its own interval is narrow enough', async () => {
    const s = await run(['--max-episodes', '300', '--workers', '2', '--stop-when', 'halfwidth<=0.05']);
    const w = s.stopWhen!;
    expect(w).toMatchObject({ rule: 'halfwidth<=0.05', metric: 'success', against: null, verdict: null });
    expect(w.stopped?.reason).toBe('halfwidth');
    expect(w.stopped!.atEpisode).toBeLessThan(300);
    const [lo, hi] = w.interval!;
    expect((hi - lo) / 2).toBeLessThanOrEqual(0.05);
    expect(s.episodes.filter((r) => r.status !== 'CANCELLED')).toHaveLength(w.stopped!.atEpisode);
  }, 120_000);

  it('refuses an early stop it cannot decide, naming the flag', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--episodes', '5', '--against', baseline], /--against .*--stop-when decided/],
      [['--episodes', '5', '--stop-when', 'decided'], /--stop-when.*against/],
      [['--episodes', '5', '--stop-when', 'soon'], /--stop-when "soon"/],
      [['--episodes', '5', '--stop-when', 'decided', '--against', baseline, '--require', 'nope > 0'], /reports no metric "nope"/],
      [['--episodes', '5', '--stop-when', 'decided', '--against', baseline, '--require', 'spl < 0'], /higher is better/],
    ];
    for (const [args, message] of cases) {
      const r = await execa('node', [MAIN, 'run', 'gridnav_planner', '--outputs', outputs, ...args], { reject: false });
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  }, 60_000);
});
