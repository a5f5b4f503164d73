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
