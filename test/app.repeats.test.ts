/** repeats through the API: startEval queues N × K plays, Run/Episode/MetricAggregate expose them, compareRuns pairs by episode. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_EVAL, startServer, waitFor, wsCollect, type TestServer } from './app.helpers.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

async function start(input: Record<string, unknown>): Promise<string> {
  const r = await server.gql(START_EVAL, { input });
  expect(r.errors).toBeUndefined();
  return r.data!.startEval.runId as string;
}

/** The run's last status, once its run dir is complete too: the subscription ends at the final summary, before the report, the score index and _DONE. */
async function finished(runId: string): Promise<string> {
  const states = await wsCollect(server.ws(), `subscription($id: ID!) { runProgress(id: $id) { status } }`, { id: runId });
  await waitFor(`run ${runId}'s _DONE`, () => existsSync(join(server.dir, 'outputs', 'eval_runs', runId, '_DONE')));
  return states.at(-1)!.data!.runProgress.status as string;
}

describe('startEval with repeats', () => {
  const BASE = { graphName: 'gridnav_planner', episodeCount: 4, seed: 5, workerCount: 2 };
  let rep: string;
  let plain: string;

  beforeAll(async () => {
    rep = await start({ ...BASE, repeats: 3 });
    plain = await start(BASE);
    for (const id of [rep, plain]) expect(await finished(id)).toBe('COMPLETED');
  }, 120_000);

  it('runs 12 plays, shows them on the run and its episodes, with the variance components per metric', async () => {
    const r = await server.gql(
      `query($id: ID!) { run(id: $id) {
        repeats episodeCount episodesDone progress
        aggregateMetrics { name count repeats betweenVar withinVar repeatsAdvice }
        episodes(first: 100) { items { index repeat episodeId seed } }
      } }`,
      { id: rep },
    );
    expect(r.errors).toBeUndefined();
    const run = r.data!.run;
    expect(run).toMatchObject({ repeats: 3, episodeCount: 12, episodesDone: 12, progress: 1 });
    const items = run.episodes.items as Array<{ index: number; repeat: number; episodeId: string; seed: number }>;
    expect(items.map((e) => e.repeat)).toEqual([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]);
    expect(new Set(items.map((e) => e.episodeId)).size).toBe(4);
    const steps = run.aggregateMetrics.find((m: { name: string }) => m.name === 'steps');
    expect(steps).toMatchObject({ count: 4, repeats: 3 });
    expect(steps.withinVar).toBeGreaterThanOrEqual(0);
    expect(steps.repeatsAdvice).toMatch(/×2 episodes → SE ×0\.71, ×2 repeats → SE ×/);

    const p = await server.gql(
      `query($id: ID!) { run(id: $id) { repeats aggregateMetrics { name repeats repeatsAdvice } episodes(first: 10) { items { repeat } } } }`,
      {
        id: plain,
      },
    );
    expect(p.data!.run.repeats).toBe(1);
    expect(
      p.data!.run.aggregateMetrics.every(
        (m: { repeats: unknown; repeatsAdvice: unknown }) => m.repeats === null && m.repeatsAdvice === null,
      ),
    ).toBe(true);
    expect(p.data!.run.episodes.items.every((e: { repeat: unknown }) => e.repeat === null)).toBe(true);
  });

  it('compareRuns pairs the repeat run with the plain run episode by episode, each scored by the mean of its plays', async () => {
    // Both runs ended with their score index; the comparison reads it (and must agree with the records).
    for (const id of [rep, plain]) expect(existsSync(join(server.dir, 'outputs', 'eval_runs', id, 'score-index.json'))).toBe(true);
    const r = await server.gql(
      `query($b: ID!, $c: [ID!]!) { compareRuns(baseline: $b, candidates: $c, metrics: ["steps"]) {
        candidates { overlap partial metrics { n baselineMean candidateMean meanDiff } } } }`,
      { b: plain, c: [rep] },
    );
    expect(r.errors).toBeUndefined();
    const c = r.data!.compareRuns.candidates[0];
    expect(c).toMatchObject({ overlap: 4, partial: false, metrics: [{ n: 4 }] });
    const items = async (id: string): Promise<Array<{ episodeId: string; metrics: { steps: number } }>> =>
      (await server.gql(`query($id: ID!) { run(id: $id) { episodes(first: 100) { items { episodeId metrics } } } }`, { id })).data!.run
        .episodes.items;
    const [p, q] = await Promise.all([items(plain), items(rep)]);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const repMeans = p.map((e) => mean(q.filter((x) => x.episodeId === e.episodeId).map((x) => x.metrics.steps)));
    expect(q).toHaveLength(12);
    const m = c.metrics[0];
    expect(m.baselineMean).toBeCloseTo(mean(p.map((e) => e.metrics.steps)), 12);
    expect(m.candidateMean).toBeCloseTo(mean(repMeans), 12);
    expect(m.meanDiff).toBeCloseTo(mean(repMeans.map((v, i) => v - p[i]!.metrics.steps)), 12);
  });

  it('refuses repeats out of range, naming the field', async () => {
    const r = await server.gql(START_EVAL, { input: { ...BASE, repeats: 0 } });
    expect(r.errors?.[0]?.message).toMatch(/repeats must be an integer in 1\.\.100/);
  });
});
