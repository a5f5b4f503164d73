/**
 * compareRuns, powerPlan and sweeps against a real server and real gridnav runs: the planner
 * at epsilon 0.1 and 0.3 on the same 200 episodes (the small `mini` mazes, so each episode is a
 * few cheap steps, and a tight step budget so both fail sometimes: about 50 % vs 23 % success).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_EVAL, codeOf, startServer, wsCollect, type TestServer } from './app.helpers.js';

const MAIN = resolve(import.meta.dirname, '../dist/main.js');
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

const EPISODES = 200;
const BASE = { graphName: 'gridnav_planner', dataset: 'mini', episodeCount: EPISODES, stepBudget: 20 };
/** The sweeps' runs: the standard mazes. */
const SWEEP_BASE = { graphName: 'gridnav_planner', episodeCount: 8, stepBudget: 60 };

async function start(input: Record<string, unknown>): Promise<string> {
  const r = await server.gql(START_EVAL, { input });
  expect(r.errors).toBeUndefined();
  return r.data!.startEval.runId as string;
}

/** Follows the run to its terminal state (the subscription ends after it). */
async function finished(runId: string): Promise<string> {
  const states = await wsCollect(server.ws(), `subscription($id: ID!) { runProgress(id: $id) { status } }`, { id: runId });
  return states.at(-1)!.data!.runProgress.status as string;
}

const COMPARE = `query($b: ID!, $c: [ID!]!, $m: [String!]) {
  compareRuns(baseline: $b, candidates: $c, metrics: $m) {
    metrics fdrLevel baseline { id }
    candidates {
      candidate { id } overlap partial note warnings
      metrics {
        metric n excludedPairs binary baselineMean candidateMean meanDiff pairedStderr ci95Low ci95High ciMethod df
        correlation unpairedStderr unpairedCi95Low unpairedCi95High pValue pairedTP mcnemarP wins ties losses bhAdjustedP bhSignificant mde
        flips { episodeId direction baselineIndex candidateIndex baselineValue candidateValue
          baselineEpisode { index metrics } candidateEpisode { index metrics } }
      }
    }
  }
}`;

async function records(
  runId: string,
): Promise<Array<{ index: number; episodeId: string; status: string; metrics: Record<string, unknown> }>> {
  const r = await server.gql(`query($id: ID!) { run(id: $id) { episodes(first: 1000) { items { index episodeId status metrics } } } }`, {
    id: runId,
  });
  return r.data!.run.episodes.items;
}

describe('compareRuns over two gridnav runs (epsilon 0.1 vs 0.3)', () => {
  let a1: string, b1: string, a4: string, b4: string;

  beforeAll(async () => {
    a1 = await start({ ...BASE, workerCount: 1, overrides: { agent: { epsilon: 0.1 } } });
    b1 = await start({ ...BASE, workerCount: 1, overrides: { agent: { epsilon: 0.3 } } });
    a4 = await start({ ...BASE, workerCount: 4, overrides: { agent: { epsilon: 0.1 } } });
    b4 = await start({ ...BASE, workerCount: 4, overrides: { agent: { epsilon: 0.3 } } });
    for (const id of [a1, b1, a4, b4]) expect(await finished(id)).toBe('COMPLETED');
  }, 300_000);

  it('pairs the episodes: the paired interval of the success difference is narrower than the unpaired one', async () => {
    const r = await server.gql(COMPARE, { b: a1, c: [b1] });
    expect(r.errors).toBeUndefined();
    const cmp = r.data!.compareRuns;
    expect(cmp.baseline.id).toBe(a1);
    // The primary metric first, then those with a declared goal, by name.
    expect(cmp.metrics).toEqual(['success', 'distance_to_goal', 'spl', 'steps']);
    const c = cmp.candidates[0];
    expect(c).toMatchObject({ overlap: EPISODES, partial: false, note: null, warnings: [] });
    const success = c.metrics.find((m: { metric: string }) => m.metric === 'success');
    expect(success).toMatchObject({ binary: true, n: EPISODES, ciMethod: 'NEWCOMBE', df: EPISODES - 1, excludedPairs: 0 });
    expect(success.meanDiff).toBeLessThan(0);
    expect(success.correlation).toBeGreaterThan(0);
    expect(success.ci95High - success.ci95Low).toBeLessThan(success.unpairedCi95High - success.unpairedCi95Low);
    expect(success.ci95Low).toBeLessThan(success.meanDiff);
    expect(success.pValue).toBe(success.mcnemarP);
    expect(success.wins + success.ties + success.losses).toBe(EPISODES);
    expect(success.mde).toBeGreaterThan(0);
  });

  it('lists exactly the episodes whose success differs, with both records', async () => {
    const r = await server.gql(COMPARE, { b: a1, c: [b1], m: ['success'] });
    const success = r.data!.compareRuns.candidates[0].metrics[0];
    const [ra, rb] = await Promise.all([records(a1), records(b1)]);
    const byId = new Map(rb.map((e) => [e.episodeId, e]));
    const direct = ra
      .filter((e) => Number(e.metrics.success) !== Number(byId.get(e.episodeId)!.metrics.success))
      .map((e) => ({
        episodeId: e.episodeId,
        direction: Number(byId.get(e.episodeId)!.metrics.success) > Number(e.metrics.success) ? 'GAINED' : 'LOST',
      }));
    expect(direct.length).toBeGreaterThan(0);
    expect(
      success.flips.map((f: { episodeId: string; direction: string }) => ({ episodeId: f.episodeId, direction: f.direction })),
    ).toEqual(direct);
    expect(success.wins).toBe(direct.filter((d) => d.direction === 'GAINED').length);
    expect(success.losses).toBe(direct.filter((d) => d.direction === 'LOST').length);
    for (const f of success.flips) {
      expect(f.baselineEpisode.index).toBe(f.baselineIndex);
      expect(Number(f.baselineEpisode.metrics.success)).toBe(f.baselineValue);
      expect(Number(f.candidateEpisode.metrics.success)).toBe(f.candidateValue);
    }
  });

  it('gives the same numbers at 1 and 4 workers', async () => {
    const one = await server.gql(COMPARE, { b: a1, c: [b1] });
    const four = await server.gql(COMPARE, { b: a4, c: [b4] });
    const strip = (d: any) => d.data.compareRuns.candidates[0].metrics;
    expect(strip(one)).toHaveLength(4);
    expect(strip(four)).toEqual(strip(one));
  });

  it('gates the better epsilon as a pass, the worse as a fail, a run against its own config as inconclusive, the same at 1 and 4 workers', async () => {
    const GATE = `query($b: ID!, $c: ID!, $r: [String!]) {
      gate(baseline: $b, candidate: $c, requirements: $r) {
        verdict alpha correction baseline { id } candidate { id }
        metrics { metric requirement question verdict decidedAt n intervalLow intervalHigh method level mde episodesNeeded reason }
      }
    }`;
    const better = await server.gql(GATE, { b: b1, c: a1, r: ['success > 0'] });
    expect(better.errors).toBeUndefined();
    const g = better.data!.gate;
    expect(g).toMatchObject({ verdict: 'PASS', alpha: 0.05, correction: 'holm', baseline: { id: b1 }, candidate: { id: a1 } });
    expect(g.metrics[0]).toMatchObject({ metric: 'success', question: 'SUPERIORITY', verdict: 'PASS', n: EPISODES, method: 'BETTING' });
    expect(g.metrics[0].decidedAt).toBeLessThan(EPISODES);
    expect(g.metrics[0].intervalLow).toBeGreaterThan(0);
    const four = await server.gql(GATE, { b: b4, c: a4, r: ['success > 0'] });
    expect(four.data!.gate.metrics).toEqual(g.metrics);
    const worse = await server.gql(GATE, { b: a1, c: b1, r: ['success >= -0.02'] });
    expect(worse.data!.gate.verdict).toBe('FAIL');
    // The same config at 1 and 4 workers plays the same episodes alike: nothing to tell apart.
    const same = await server.gql(GATE, { b: a1, c: a4, r: ['success > 0'] });
    expect(same.data!.gate.metrics[0]).toMatchObject({ verdict: 'INCONCLUSIVE', decidedAt: null });
    // `evalctl gate --server` asks the same query and exits on its verdict.
    const cli = await execa(
      'node',
      [MAIN, 'gate', '--server', server.url, '--baseline', b1, '--candidate', a1, '--require', 'success > 0', '--format', 'json'],
      { reject: false },
    );
    expect(cli.exitCode, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout).metrics[0]).toMatchObject({
      verdict: 'pass',
      question: 'superiority',
      decidedAt: g.metrics[0].decidedAt,
    });
    const bad = await server.gql(GATE, { b: a1, c: b1, r: ['success < 0'] });
    expect(codeOf(bad)).toBe('BAD_USER_INPUT');
    expect(bad.errors![0]!.message).toMatch(/higher is better/);
  });

  it('flags many comparisons with Benjamini–Hochberg, and plans power from the paired spread', async () => {
    const r = await server.gql(COMPARE, { b: a1, c: [b1, b4] });
    const all = r.data!.compareRuns.candidates.flatMap((c: { metrics: unknown[] }) => c.metrics);
    expect(all).toHaveLength(8);
    for (const m of all) if (m.bhAdjustedP !== null) expect(m.bhAdjustedP).toBeGreaterThanOrEqual(m.pValue);
    expect(all.find((m: { metric: string }) => m.metric === 'success').bhSignificant).toBe(true);

    const plan = await server.gql(
      `query($id: ID!) { powerPlan(run: $id, effect: 0.1) { source reference { id } metrics { metric n sd mde effect episodesNeeded } } }`,
      { id: a1 },
    );
    expect(plan.errors).toBeUndefined();
    expect(plan.data!.powerPlan.source).toBe('PAIRED');
    const s = plan.data!.powerPlan.metrics.find((m: { metric: string }) => m.metric === 'success');
    expect(s).toMatchObject({ n: EPISODES, effect: 0.1 });
    // An effect below the MDE at n needs more than n episodes, one above it fewer.
    expect(s.mde).toBeGreaterThan(0);
    expect(s.episodesNeeded > EPISODES).toBe(s.mde > 0.1);

    // An effect so small that the count passes what GraphQL's Int carries: null, not a field error.
    const tiny = await server.gql(`query($id: ID!) { powerPlan(run: $id, effect: 1e-9) { metrics { metric sd episodesNeeded } } }`, {
      id: a1,
    });
    expect(tiny.errors).toBeUndefined();
    const spread = tiny.data!.powerPlan.metrics.find((m: { metric: string; sd: number }) => m.metric === 'success');
    expect(spread.sd).toBeGreaterThan(0);
    expect(spread.episodesNeeded).toBeNull();
  });

  it('compares partly overlapping runs on the overlap and says so; refuses runs that share nothing', async () => {
    const shifted = await start({ ...BASE, episodeCount: 2, episodeOffset: EPISODES - 2, overrides: { agent: { epsilon: 0.3 } } });
    const apart = await start({ ...BASE, dataset: 'standard', episodeCount: 2 });
    expect(await finished(shifted)).toBe('COMPLETED');
    expect(await finished(apart)).toBe('COMPLETED');
    const r = await server.gql(COMPARE, { b: a1, c: [shifted] });
    expect(r.data!.compareRuns.candidates[0]).toMatchObject({ overlap: 2, partial: true });
    expect(r.data!.compareRuns.candidates[0].note).toContain('2 episodes both runs have');
    const none = await server.gql(COMPARE, { b: a1, c: [apart] });
    expect(codeOf(none)).toBe('BAD_USER_INPUT');
    expect(none.errors![0]!.message).toContain('share no episode');
    const missing = await server.gql(COMPARE, { b: a1, c: ['20000101_000000'] });
    expect(codeOf(missing)).toBe('NOT_FOUND');
  }, 60_000);

  it('shows the interval of every metric on the run', async () => {
    const r = await server.gql(
      `query($id: ID!) { run(id: $id) { aggregateMetrics { name mean count ci95Low ci95High ciMethod binary clusters excluded { status count } } } }`,
      { id: a1 },
    );
    const success = r.data!.run.aggregateMetrics.find((m: { name: string }) => m.name === 'success');
    expect(success).toMatchObject({ count: EPISODES, binary: true, ciMethod: 'WILSON', clusters: null, excluded: [] });
    expect(success.ci95Low).toBeLessThan(success.mean);
    expect(success.ci95High).toBeGreaterThan(success.mean);
    const steps = r.data!.run.aggregateMetrics.find((m: { name: string }) => m.name === 'steps');
    expect(steps).toMatchObject({ binary: false, ciMethod: 'T' });
  });

  it('warns when two runs differ in more than their config (another nodeset code, from manifest.json)', async () => {
    const path = join(server.dir, 'outputs', 'eval_runs', b4, 'manifest.json');
    const manifest = JSON.parse(await readFile(path, 'utf8'));
    const planner = manifest.nodesets.find((n: { name: string }) => n.name === 'planner');
    planner.codeSha256 = '0'.repeat(64);
    await writeFile(path, JSON.stringify(manifest));
    const r = await server.gql(COMPARE, { b: a4, c: [b4] });
    expect(r.errors).toBeUndefined();
    expect(r.data!.compareRuns.candidates[0].warnings).toEqual([expect.stringContaining('planner')]);
  });
});

const SWEEP_FIELDS = `id status runCount runsFinished seeds graphName cancelledAt metrics
  runs { id status }
  configs { index isBaseline label point runs { id seed overrides }
    metrics { name aggregate { mean count ci95Low ci95High ciMethod } vsBaseline { meanDiff ci95Low ci95High n pValue bhSignificant } } }`;

describe('sweeps', () => {
  it('queues 3 epsilons × 2 seeds, and one table holds every config with intervals and paired differences', async () => {
    const r = await server.gql(
      `mutation($base: StartEvalInput!, $grid: JSON!, $seeds: [Int!]) { startSweep(base: $base, grid: $grid, seeds: $seeds) { ${SWEEP_FIELDS} } }`,
      { base: SWEEP_BASE, grid: { 'agent.epsilon': [0.1, 0.3, 0.5] }, seeds: [0, 1] },
    );
    expect(r.errors).toBeUndefined();
    const sweep = r.data!.startSweep;
    expect(sweep).toMatchObject({ runCount: 6, seeds: [0, 1], graphName: 'gridnav_planner', cancelledAt: null });
    expect(sweep.configs.map((c: { label: string }) => c.label)).toEqual(['agent.epsilon=0.1', 'agent.epsilon=0.3', 'agent.epsilon=0.5']);
    for (const c of sweep.configs) {
      expect(c.runs.map((run: { seed: number }) => run.seed)).toEqual([0, 1]);
      for (const run of c.runs) expect(run.overrides).toEqual({ agent: { epsilon: c.point['agent.epsilon'] } });
    }
    for (const run of sweep.runs) expect(await finished(run.id)).toBe('COMPLETED');

    const done = await server.gql(`query($id: ID!) { sweep(id: $id) { ${SWEEP_FIELDS} } }`, { id: sweep.id });
    expect(done.errors).toBeUndefined();
    const table = done.data!.sweep;
    expect(table).toMatchObject({ status: 'COMPLETED', runsFinished: 6 });
    expect(table.metrics).toContain('success');
    const [base, ...others] = table.configs;
    expect(base.isBaseline).toBe(true);
    for (const m of base.metrics) expect(m.vsBaseline).toBeNull();
    for (const c of others) {
      const s = c.metrics.find((m: { name: string }) => m.name === 'spl');
      // 8 episodes, each the mean of its 2 seeds.
      expect(s.aggregate.count).toBe(8);
      expect(s.aggregate.ci95Low).toBeLessThanOrEqual(s.aggregate.mean);
      expect(s.vsBaseline.n).toBe(8);
      expect(s.vsBaseline.ci95Low).toBeLessThanOrEqual(s.vsBaseline.meanDiff);
      expect(s.vsBaseline.ci95High).toBeGreaterThanOrEqual(s.vsBaseline.meanDiff);
    }
    const list = await server.gql(`{ sweeps { id } }`);
    expect(list.data!.sweeps.map((s: { id: string }) => s.id)).toContain(sweep.id);
  }, 180_000);

  it('cancelSweep cancels every run of the sweep', { timeout: 120_000 }, async () => {
    const r = await server.gql(
      `mutation($base: StartEvalInput!, $grid: JSON!, $seeds: [Int!]) { startSweep(base: $base, grid: $grid, seeds: $seeds) { id runs { id } } }`,
      // 500: all the episodes gridnav's val split has (more fails the run at its start, racing the cancel).
      { base: { graphName: 'gridnav_planner', episodeCount: 500 }, grid: { 'agent.epsilon': [0.1, 0.3, 0.5] }, seeds: [0, 1] },
    );
    expect(r.errors).toBeUndefined();
    const { id, runs } = r.data!.startSweep;
    const c = await server.gql(`mutation($id: ID!) { cancelSweep(id: $id) { id cancelledAt } }`, { id });
    expect(c.errors).toBeUndefined();
    expect(c.data!.cancelSweep.cancelledAt).not.toBeNull();
    for (const run of runs) {
      const status = await finished(run.id);
      // The error, should a run end otherwise, says why.
      const why =
        status === 'CANCELLED'
          ? ''
          : JSON.stringify((await server.gql(`query($id: ID!) { run(id: $id) { error { code message } } }`, { id: run.id })).data);
      expect(status, why).toBe('CANCELLED');
    }
    const after = await server.gql(`query($id: ID!) { sweep(id: $id) { status runsFinished } }`, { id });
    expect(after.data!.sweep).toEqual({ status: 'CANCELLED', runsFinished: 6 });
    // Idempotent.
    expect((await server.gql(`mutation($id: ID!) { cancelSweep(id: $id) { id } }`, { id })).errors).toBeUndefined();
  });

  it('refuses a bad grid, and says which sweep is unknown', async () => {
    const bad = await server.gql(`mutation($base: StartEvalInput!, $grid: JSON!) { startSweep(base: $base, grid: $grid) { id } }`, {
      base: SWEEP_BASE,
      grid: { epsilon: [0.1] },
    });
    expect(codeOf(bad)).toBe('BAD_USER_INPUT');
    expect(bad.errors![0]!.message).toContain('expected "node.key"');
    const noSeeds = await server.gql(
      `mutation($base: StartEvalInput!, $grid: JSON!, $seeds: [Int!]) { startSweep(base: $base, grid: $grid, seeds: $seeds) { id } }`,
      { base: SWEEP_BASE, grid: { 'agent.epsilon': [0.1] }, seeds: [] },
    );
    expect(codeOf(noSeeds)).toBe('BAD_USER_INPUT');
    expect(noSeeds.errors![0]!.message).toMatch(/^seeds is empty/);
    expect(codeOf(await server.gql(`{ sweep(id: "sweep_20000101_000000") { id } }`))).toBe('NOT_FOUND');
    expect(codeOf(await server.gql(`{ sweep(id: "../x") { id } }`))).toBe('BAD_USER_INPUT');
  });
});
