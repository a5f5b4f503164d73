/** The graphOut port `score`: score objects become the result's scores and the score/correct metrics. */
import { describe, expect, it } from 'vitest';
import { GraphExecutor } from '../../src/graph/executor.js';
import { validateGraph } from '../../src/graph/graph.js';
import type { GraphSpec, NodeOutputs, NodeTypeResolver, ResolvedNodeType } from '../../src/core/types.js';

const entry = (scorer: string, value: number) => ({ scorer, value, answer: 'a', extracted: 'a', target: 'b', explanation: '' });

function resolverOf(fns: Record<string, () => NodeOutputs>): NodeTypeResolver {
  const types = new Map<string, ResolvedNodeType>();
  for (const [name, f] of Object.entries(fns)) {
    const type = `t__${name}`;
    const fn = { name, inputs: [], outputs: Object.keys(f()).map((p) => ({ name: p })) };
    types.set(type, { type, nodeset: 't', fn, invoke: async () => f() });
  }
  return { resolve: (t) => types.get(t), knownTypes: () => [...types.keys()] };
}

async function run(fns: Record<string, () => NodeOutputs>, edges: GraphSpec['edges'], sinks = ['out']) {
  const spec: GraphSpec = {
    name: 'g',
    nodes: [...Object.keys(fns).map((n) => ({ id: n, type: `t__${n}` })), ...sinks.map((id) => ({ id, type: 'graphOut' }))],
    edges,
  };
  const graph = validateGraph(spec, resolverOf(fns));
  return new GraphExecutor({ graph, stepBudget: 1, context: { runSeed: 0, episodeIndex: 0, seed: 0, episodeKey: 'k' } }).run();
}

describe('graphOut port score', () => {
  it('keeps score entries from every graphOut in spec order; the first gives score and correct', async () => {
    const r = await run(
      { a: () => ({ score: entry('exact', 0), done: true }), b: () => ({ score: [entry('f1', 0.5), entry('includes', 1)] }) },
      [
        { from: 'a.score', to: 'out.score' },
        { from: 'b.score', to: 'out2.score' },
      ],
      ['out', 'out2'],
    );
    expect(r.scores?.map((s) => [s.scorer, s.value])).toEqual([
      ['exact', 0],
      ['f1', 0.5],
      ['includes', 1],
    ]);
    expect(r.metrics).toEqual({ score: 0, correct: false });
  });

  it('a plain number on a score port stays a metric and makes no score entry; a malformed object is ignored', async () => {
    const r = await run(
      { a: () => ({ n: 0.7, bad: { scorer: 'x', value: 7 } }) },
      [
        { from: 'a.n', to: 'out.score' },
        { from: 'a.bad', to: 'out2.score' },
      ],
      ['out', 'out2'],
    );
    expect(r.scores).toBeUndefined();
    expect(r.metrics).toEqual({ score: 0.7 });
  });
});
