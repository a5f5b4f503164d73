/** The executor's reserved outputs: `$events` go to onEvent in firing order, `$ending` ends the episode after its iteration. */
import { describe, expect, it } from 'vitest';
import { GraphExecutor } from '../../src/graph/executor.js';
import { validateGraph } from '../../src/graph/graph.js';
import type { EpisodeEvent, FiringLogEntry, GraphSpec } from '../../src/core/types.js';
import { outcomeOfResult } from '../../src/eval-process/episode-outcome.js';
import { memoryResolver, type MemoryFunction } from '../fixtures/memory-resolver.js';

const context = { runSeed: 1, episodeIndex: 0, seed: 99, episodeKey: 'run:0' };

/** agent → scorer → out; agent's usage → usage graphOut; the agent ends the episode at `endAt` with `kind`. */
function graph(): GraphSpec {
  return {
    name: 'reserved',
    nodes: [
      { id: 'agent', type: 'a__act' },
      { id: 'score', type: 'a__score' },
      { id: 'side', type: 'a__side' },
      { id: 'out', type: 'graphOut' },
      { id: 'usage', type: 'graphOut' },
    ],
    edges: [
      { from: 'agent.answer', to: 'score.answer' },
      { from: 'score.metrics', to: 'out.metrics' },
      { from: 'agent.usage', to: 'usage.metrics' },
      { from: 'side.n', to: 'usage.side' },
    ],
  };
}

function run(agent: MemoryFunction, opts: { scoreDoneAt?: number } = {}) {
  const scored: number[] = [];
  const fns: Record<string, MemoryFunction> = {
    act: agent,
    score: {
      inputs: ['answer?'],
      outputs: ['metrics', 'done'],
      run: ({ inputs, ctx }) => {
        scored.push(ctx.step);
        return { metrics: { correct: inputs.answer === 'ok' }, done: ctx.step === (opts.scoreDoneAt ?? -1), $events: [{ type: 'scored' }] };
      },
    },
    side: {
      outputs: ['n'],
      run: ({ ctx }) => ({
        n: ctx.step,
        $events: [
          { type: 'side', k: 1 },
          { type: 'side', k: 2 },
        ],
      }),
    },
  };
  const events: EpisodeEvent[] = [];
  const firings: FiringLogEntry[] = [];
  const exec = new GraphExecutor({
    graph: validateGraph(graph(), memoryResolver({ a: fns })),
    stepBudget: 10,
    context,
    onEvent: (e) => events.push(e),
    onFiring: (f) => firings.push(f),
  });
  return { exec, events, firings, scored };
}

describe('reserved outputs', () => {
  it('$events are written with step and nodeId in topological order per iteration, and never flow downstream', async () => {
    const { exec, events, firings } = run(
      {
        outputs: ['answer', 'usage'],
        run: ({ ctx }) => ({ answer: 'ok', usage: { llm_calls: ctx.step + 1 }, $events: [{ type: 'llm_call', n: ctx.step }] }),
      },
      { scoreDoneAt: 1 },
    );
    const result = await exec.run();
    expect(result.ending).toBe('completed');
    expect(result.metrics).toEqual({ correct: true, llm_calls: 2, side: 1 });
    // Topological order is agent, score, side (spec order among ready nodes) whatever the call timing.
    const order = events.map((e) => `${e.step}:${e.nodeId}:${e.type}`);
    expect(order).toEqual([
      '0:agent:llm_call',
      '0:score:scored',
      '0:side:side',
      '0:side:side',
      '1:agent:llm_call',
      '1:score:scored',
      '1:side:side',
      '1:side:side',
    ]);
    expect(events[0]).toEqual({ step: 0, nodeId: 'agent', type: 'llm_call', n: 0 });
    // The firing log keeps the data outputs only.
    const agentFiring = firings.find((f) => f.nodeId === 'agent');
    expect(Object.keys(agentFiring?.outputs ?? {})).toEqual(['answer', 'usage']);
  });

  it.each([
    ['budget_exhausted', 'BUDGET_EXHAUSTED'],
    ['infra_error', 'INFRA_ERROR'],
  ] as const)(
    '$ending %s ends the episode after its iteration with %s; nodes it feeds do not fire, its metrics are kept',
    async (kind, status) => {
      const { exec, events, scored } = run({
        outputs: ['answer', 'usage'],
        run: ({ ctx }) =>
          ctx.step < 2
            ? { answer: 'ok', usage: { llm_calls: ctx.step + 1 } }
            : { usage: { llm_calls: 2 }, $ending: { kind, message: `stopped: ${kind}` }, $events: [{ type: 'end' }] },
      });
      const result = await exec.run();
      expect(result.ending).toBe(kind);
      expect(result.steps).toBe(3);
      expect(result.error).toBe(`stopped: ${kind}`);
      // The scorer fired at steps 0 and 1 only: at step 2 its input came from the ending node.
      expect(scored).toEqual([0, 1]);
      expect(result.metrics).toEqual({ correct: true, llm_calls: 2, side: 2 });
      expect(events.filter((e) => e.step === 2).map((e) => `${e.nodeId}:${e.type}`)).toEqual(['agent:end', 'side:side', 'side:side']);
      expect(outcomeOfResult(result, undefined, 1000)).toEqual({ status, error: `stopped: ${kind}` });
    },
  );

  it('a malformed $ending or $events is a node error naming the output', async () => {
    const bad = run({ outputs: ['answer', 'usage'], run: () => ({ answer: 'ok', $ending: { kind: 'nope' } }) });
    const r1 = await bad.exec.run();
    expect(r1.ending).toBe('error');
    expect(r1.nodeErrors[0]?.message).toMatch(/output \$ending must be \{ kind: "budget_exhausted" \| "infra_error"/);
    const bad2 = run({ outputs: ['answer', 'usage'], run: () => ({ answer: 'ok', $events: 'x' }) });
    const r2 = await bad2.exec.run();
    expect(r2.nodeErrors[0]?.message).toBe('output $events must be an array of objects');
  });
});

describe('$nonFinite: metrics sent as NaN or ±Infinity', () => {
  const exec = (spec: GraphSpec, env: MemoryFunction, seen: unknown[] = [], stepBudget = 1) =>
    new GraphExecutor({
      graph: validateGraph(
        spec,
        memoryResolver({ n: { env, look: { inputs: ['metrics?'], outputs: [], run: ({ inputs }) => (seen.push(inputs), {}) } } }),
      ),
      stepBudget,
      context,
    });

  it('names each one the host noted (its null left out), or that arrived as the number itself, unless another graphOut reports the name', async () => {
    const spec: GraphSpec = {
      name: 'odd',
      nodes: [
        { id: 'env', type: 'n__env' },
        { id: 'look', type: 'n__look' },
        { id: 'out', type: 'graphOut' },
        { id: 'late', type: 'graphOut' },
      ],
      edges: [
        { from: 'env.metrics', to: 'out.metrics' },
        { from: 'env.metrics', to: 'look.metrics' },
        { from: 'env.dist', to: 'out.dist' },
        { from: 'env.count', to: 'out.count' },
        { from: 'env.raw', to: 'out.raw' },
        { from: 'env.extra', to: 'late.metrics' },
      ],
    };
    const seen: unknown[] = [];
    const r = await exec(
      spec,
      {
        outputs: ['metrics', 'dist', 'count', 'raw', 'extra'],
        // As a host answers over JSON: each NaN or ±Infinity a null, named in $nonFinite.
        run: () => ({
          metrics: { reward: null, spl: null, ok: 1 },
          dist: null,
          count: null,
          raw: Number.NaN,
          extra: { spl: 0.25 },
          $nonFinite: [
            { port: 'metrics', key: 'reward', value: 'NaN' },
            { port: 'metrics', key: 'spl', value: '-Infinity' },
            { port: 'dist', value: 'Infinity' },
            // Not notes: left out.
            'junk',
            { port: 'count', value: 'huge' },
            { port: 7, value: 'NaN' },
          ],
        }),
      },
      seen,
    ).run();
    expect(r.metrics).toEqual({ ok: 1, spl: 0.25 });
    // A null without a note (count) is left out silently, as before; spl is reported by the other graphOut.
    expect(r.droppedMetrics).toEqual([
      { name: 'reward', value: 'NaN', nodeId: 'env', step: 0 },
      { name: 'dist', value: 'Infinity', nodeId: 'env', step: 0 },
      { name: 'raw', value: 'NaN', nodeId: 'env', step: 0 },
    ]);
    // The notes never flow downstream.
    expect(seen).toEqual([{ metrics: { reward: null, spl: null, ok: 1 } }]);
  });

  it('follows the last value each port received, through loop edges too, and is absent when nothing was dropped', async () => {
    const spec: GraphSpec = {
      name: 'steps',
      nodes: [
        { id: 'env', type: 'n__env' },
        { id: 'out', type: 'graphOut' },
      ],
      edges: [
        { from: 'env.dist', to: 'out.dist' },
        { from: 'env.dist', to: 'out.prev', loop: true },
        { from: 'env.metrics', to: 'out.metrics' },
      ],
    };
    // Step 0 sends NaN, step 1 a number: the last dist is fine, the loop edge's (step 0's) is not.
    const env: MemoryFunction = {
      outputs: ['dist', 'metrics'],
      run: ({ ctx }) =>
        ctx.step === 0
          ? { dist: null, metrics: { a: 1 }, $nonFinite: [{ port: 'dist', value: 'NaN' }] }
          : { dist: 3, metrics: { a: null }, $nonFinite: [{ port: 'metrics', key: 'a', value: 'Infinity' }] },
    };
    const r = await exec(spec, env, [], 2).run();
    expect(r.metrics).toEqual({ dist: 3 });
    expect(r.droppedMetrics).toEqual([
      { name: 'prev', value: 'NaN', nodeId: 'env', step: 0 },
      { name: 'a', value: 'Infinity', nodeId: 'env', step: 1 },
    ]);
    const fine = await exec(spec, { outputs: ['dist', 'metrics'], run: () => ({ dist: 1, metrics: { a: 1 } }) }, [], 2).run();
    expect(fine.metrics).toEqual({ dist: 1, prev: 1, a: 1 });
    expect(fine).not.toHaveProperty('droppedMetrics');
  });
});
