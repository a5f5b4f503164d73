/**
 * compareRuns benchmark: two synthetic 10,000-episode run directories (success, spl, steps,
 * distance per episode, as gridnav writes them, with the score index a run's end writes),
 * compared over GraphQL on a real server (scores read, pairing, every statistic, the flips),
 * next to the first query on two runs without an index (summary.json parsed, as for runs
 * written before indexes) and the pure comparison alone. Target: the query answers in
 * ≤ 300 ms, the first one included. Run alone: `node --import tsx bench/compare.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildApp } from '../src/app.js';
import { compareRuns } from '../src/compare/compare-runs.js';
import { scoreTable } from '../src/compare/episode-scores.js';
import { writeScoreIndexOfSummary } from '../src/compare/score-index.js';
import { createPrng } from '../src/core/prng.js';
import { computeAggregates } from '../src/store/aggregate.js';
import { createRunDir, touchDone, writeSummary } from '../src/store/run-dir.js';
import type { EpisodeRecord, RunSummary } from '../src/store/types.js';

const EPISODES = 10_000;
const TARGET_MS = 300;
const REPEATS = 10;

const quiet = { info: () => {}, warn: () => {}, error: (m: string) => process.stderr.write(`[server] ${m}\n`) };

function records(seed: number, pSuccess: number): EpisodeRecord[] {
  // One stream for the episode's difficulty (shared by both runs: that is what pairing exploits), one per run.
  const shared = createPrng(7);
  const own = createPrng(seed);
  return Array.from({ length: EPISODES }, (_, index) => {
    const hard = shared.next();
    const success = own.next() < pSuccess * (1.4 - hard) ? 1 : 0;
    const steps = 20 + Math.floor(hard * 40 + own.next() * 20);
    return {
      index,
      episodeId: `gridnav/standard/val/${index}`,
      status: success ? 'COMPLETED' : 'BUDGET_EXHAUSTED',
      steps,
      metrics: { success, spl: success * (0.6 + 0.4 * own.next()), steps, distance_to_goal: success ? 0 : Math.floor(own.next() * 30) },
      seed: index,
      workerId: index % 4,
      durationMs: 100,
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:00:01.000Z',
      stepBudget: 60,
      assets: [{ name: 'env_trajectory.png', mime: 'image/png', bytes: 4500, nodeId: 'env', step: steps }],
    };
  });
}

async function writeRun(outputs: string, seed: number, p: number, at: Date, indexed: boolean): Promise<string> {
  const { runId, dir } = createRunDir(outputs, at);
  const episodes = records(seed, p);
  const summary: RunSummary = {
    seq: 1,
    runId,
    status: 'COMPLETED',
    graphName: 'gridnav_planner',
    episodeCount: EPISODES,
    workerCount: 4,
    seed,
    priority: 0,
    episodesDone: EPISODES,
    createdAt: at.toISOString(),
    startedAt: at.toISOString(),
    finishedAt: at.toISOString(),
    error: null,
    ...computeAggregates(episodes),
    episodes,
  };
  await writeSummary(dir, summary);
  // What runBatch does at a run's end, after the final summary.
  if (indexed && !(await writeScoreIndexOfSummary(dir, summary))) throw new Error('score index not written');
  await touchDone(dir);
  return runId;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchCompare(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-compare-'));
  const outputs = join(dir, 'outputs');
  const a = await writeRun(outputs, 1, 0.7, new Date(2026, 0, 1, 0, 0, 0), true);
  const b = await writeRun(outputs, 2, 0.6, new Date(2026, 0, 1, 0, 0, 1), true);
  const oldA = await writeRun(outputs, 1, 0.7, new Date(2026, 0, 1, 0, 0, 2), false);
  const oldB = await writeRun(outputs, 2, 0.6, new Date(2026, 0, 1, 0, 0, 3), false);
  const app = buildApp({ outputsDir: outputs, logger: quiet, webDir: join(dir, 'no-web'), scheduler: { sharedHostIdleMs: 0 } });
  try {
    const { url } = await app.start(0);
    const queryOf = (base: string, cand: string) =>
      JSON.stringify({
        query: `query($b: ID!, $c: [ID!]!) { compareRuns(baseline: $b, candidates: $c) { metrics candidates { overlap metrics {
        metric n meanDiff ci95Low ci95High unpairedCi95Low unpairedCi95High correlation pValue wins ties losses bhSignificant mde
        flips { episodeId direction baselineIndex candidateIndex } } } } }`,
        variables: { b: base, c: [cand] },
      });
    const once = async (query = queryOf(a, b)): Promise<{ ms: number; flips: number; text: string }> => {
      const t0 = performance.now();
      const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: query });
      const body = (await res.json()) as { data?: any; errors?: unknown };
      const ms = performance.now() - t0;
      if (!body.data) throw new Error(`compareRuns failed: ${JSON.stringify(body.errors)}`);
      const success = body.data.compareRuns.candidates[0].metrics.find((m: { metric: string }) => m.metric === 'success');
      return { ms, flips: success.flips.length, text: JSON.stringify(body.data.compareRuns.candidates[0].metrics) };
    };
    const first = await once();
    const times: number[] = [];
    for (let i = 0; i < REPEATS; i++) times.push((await once()).ms);
    // Runs without an index: summary.json parsed (the comparison code is warm by now, so this is the reading alone).
    const unindexed = await once(queryOf(oldA, oldB));
    if (unindexed.text !== first.text) throw new Error('runs with and without a score index compared differently');

    const sa = records(1, 0.7);
    const sb = records(2, 0.6);
    const pure: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      const t0 = performance.now();
      compareRuns({ runId: a, scores: scoreTable(sa) }, [{ runId: b, scores: scoreTable(sb) }]);
      pure.push(performance.now() - t0);
    }
    const p50 = median(times);
    const worst = Math.max(first.ms, ...times);
    console.log(
      `compareRuns over two ${EPISODES.toLocaleString('en')}-episode runs (4 metrics, ${first.flips} flipped episodes of success)`,
    );
    console.log(`(${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}: on a busy machine every figure grows with the load)`);
    const rows = [
      ['what', 'first ms', `median ms (${REPEATS})`, 'max ms', `≤ ${TARGET_MS} ms`],
      [
        'GraphQL query (first: read score indexes; then cached scores)',
        first.ms.toFixed(1),
        p50.toFixed(1),
        worst.toFixed(1),
        worst <= TARGET_MS ? 'yes' : 'NO',
      ],
      ['GraphQL query, runs without an index (parse summary.json)', unindexed.ms.toFixed(1), '', '', ''],
      ['pure comparison (records in memory)', pure[0]!.toFixed(1), median(pure).toFixed(1), Math.max(...pure).toFixed(1), ''],
    ];
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
    for (const r of rows) console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
  } finally {
    await app.stop({ cancelRunning: true });
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await benchCompare();
  process.exit(0);
}
