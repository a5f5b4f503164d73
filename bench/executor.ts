/**
 * Executor overhead per node firing for in-process nodes: a chain of trivial local handlers
 * run by the GraphExecutor, beside awaiting the same handler directly.
 * Run alone: `node --import tsx bench/executor.ts`.
 */
import { pathToFileURL } from 'node:url';
import { GraphExecutor } from '../src/graph/executor.js';
import { validateGraph } from '../src/graph/graph.js';
import type { FiringLogEntry, GraphSpec, NodeCallArgs, NodeOutputs, NodeTypeResolver, ResolvedNodeType } from '../src/core/types.js';

const CHAIN = 10;
const STEPS = 2_000;
const ROUNDS = 7;
const TARGET_US = 10;

const handler = ({ inputs }: NodeCallArgs): NodeOutputs => ({ v: ((inputs.v as number | undefined) ?? 0) + 1 });

const resolved: ResolvedNodeType = {
  type: 'bench__inc',
  nodeset: 'bench',
  fn: { name: 'inc', inputs: [{ name: 'v', optional: true }], outputs: [{ name: 'v' }] },
  invoke: async (args) => handler(args),
};
const resolver: NodeTypeResolver = { resolve: (t) => (t === resolved.type ? resolved : undefined), knownTypes: () => [resolved.type] };

function chainGraph(): GraphSpec {
  const nodes = Array.from({ length: CHAIN }, (_, i) => ({ id: `n${i}`, type: resolved.type }));
  const edges = nodes.slice(1).map((n, i) => ({ from: `n${i}.v`, to: `${n.id}.v` }));
  return {
    name: 'bench_chain',
    nodes: [...nodes, { id: 'out', type: 'graphOut' }],
    edges: [...edges, { from: `n${CHAIN - 1}.v`, to: 'out.value' }],
  };
}

const context = { runSeed: 0, episodeIndex: 0, seed: 0, episodeKey: 'bench:0' };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timeDirect(): Promise<number> {
  const calls = CHAIN * STEPS;
  const signal = new AbortController().signal;
  const t0 = performance.now();
  let v = 0;
  for (let i = 0; i < calls; i++) {
    const out = await resolved.invoke({ inputs: { v }, config: {}, ctx: { ...context, step: i, nodeId: 'n' }, signal });
    v = (out.v as number) % 1000;
  }
  return ((performance.now() - t0) * 1000) / calls;
}

async function timeExecutor(withLog: boolean): Promise<number> {
  const graph = validateGraph(chainGraph(), resolver);
  const log: FiringLogEntry[] = [];
  const exec = new GraphExecutor({
    graph,
    stepBudget: STEPS,
    context,
    ...(withLog ? { onFiring: (e: FiringLogEntry) => void log.push(e) } : {}),
  });
  const t0 = performance.now();
  const r = await exec.run();
  const us = ((performance.now() - t0) * 1000) / (CHAIN * STEPS);
  if (r.steps !== STEPS || r.metrics.value !== CHAIN) throw new Error(`bench graph ran wrong: ${JSON.stringify(r)}`);
  return us;
}

export async function benchExecutor(): Promise<void> {
  const rows: Array<[string, number[]]> = [
    ['handler awaited directly', []],
    ['GraphExecutor', []],
    ['GraphExecutor + firing log', []],
  ];
  for (let round = 0; round < ROUNDS + 1; round++) {
    const direct = await timeDirect();
    const exec = await timeExecutor(false);
    const logged = await timeExecutor(true);
    // Round 0 warms the JIT and is not counted.
    if (round === 0) continue;
    rows[0]![1].push(direct);
    rows[1]![1].push(exec);
    rows[2]![1].push(logged);
  }
  const direct = median(rows[0]![1]);
  console.log(`in-process firings: chain of ${CHAIN} trivial handlers × ${STEPS} iterations, median of ${ROUNDS} rounds`);
  console.log(`${'path'.padEnd(30)} ${'µs/firing'.padStart(10)} ${'overhead µs'.padStart(12)}  target`);
  for (const [name, xs] of rows) {
    const m = median(xs);
    const overhead = name === rows[0]![0] ? '' : (m - direct).toFixed(2);
    const target = name === 'GraphExecutor' ? `≤ ${TARGET_US} µs ${m <= TARGET_US ? 'ok' : 'MISSED'}` : '';
    console.log(`${name.padEnd(30)} ${m.toFixed(2).padStart(10)} ${overhead.padStart(12)}  ${target}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchExecutor();
}
