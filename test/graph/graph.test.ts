import { describe, expect, it } from 'vitest';
import { BadInputError, GraphValidationError } from '../../src/errors.js';
import { applyOverrides, parseGraph, parseSetFlags, validateGraph } from '../../src/graph/graph.js';
import type { GraphSpec } from '../../src/core/types.js';
import { memoryResolver } from '../fixtures/memory-resolver.js';

const resolver = memoryResolver({
  env_gridnav: {
    step: { inputs: ['action?'], outputs: ['observation', 'done', 'metrics'] },
  },
  planner: {
    act: { inputs: ['observation'], outputs: ['action'], config: { epsilon: { default: 0 } } },
  },
});

const good = (): GraphSpec => ({
  name: 'gridnav_planner',
  step_budget: 200,
  nodes: [
    { id: 'env', type: 'env_gridnav__step' },
    { id: 'agent', type: 'planner__act', config: { epsilon: 0.1 } },
    { id: 'result', type: 'graphOut' },
  ],
  edges: [
    { from: 'env.observation', to: 'agent.observation' },
    { from: 'agent.action', to: 'env.action', loop: true },
    { from: 'env.metrics', to: 'result.metrics' },
  ],
});

/** The problems validateGraph reports for `spec`. */
function problemsOf(spec: GraphSpec): string[] {
  try {
    validateGraph(spec, resolver);
  } catch (err) {
    expect(err).toBeInstanceOf(GraphValidationError);
    expect((err as GraphValidationError).code).toBe('GRAPH_INVALID');
    return (err as GraphValidationError).problems;
  }
  throw new Error('expected the graph to be refused');
}

describe('parseGraph', () => {
  it('accepts the DESIGN §3 example', () => {
    expect(parseGraph(good(), 'gridnav_planner.json')).toEqual(good());
  });

  it('names the JSON path of each shape error and the source', () => {
    const bad = { name: 'x', nodes: [{ id: 'a' }, { id: 'b.c', type: 'graphOut' }], edges: [{ from: 1, to: 'b.x' }], step_buget: 3 };
    try {
      parseGraph(bad, 'graphs/x.json');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(GraphValidationError);
      const e = err as GraphValidationError;
      expect(e.message).toContain('graphs/x.json');
      expect(e.problems).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^nodes\[0\]\.type: /),
          expect.stringMatching(/^nodes\[1\]\.id: node id "b\.c" may only contain/),
          expect.stringMatching(/^edges\[0\]\.from: .*expected string/),
          expect.stringMatching(/step_buget/),
        ]),
      );
    }
  });

  it('refuses a non-object', () => {
    expect(() => parseGraph('nope', 'request')).toThrow(/request.*\(root\)/);
  });
});

describe('validateGraph', () => {
  it('accepts a good graph and exposes types, edges and a topological order', () => {
    const g = validateGraph(good(), resolver);
    expect(g.order).toEqual(['env', 'agent', 'result']);
    expect(g.graphOuts).toEqual(['result']);
    const env = g.nodes.get('env')!;
    expect(env.resolved?.type).toBe('env_gridnav__step');
    expect(env.loopIncoming.map((e) => e.edge.from)).toEqual(['agent.action']);
    expect(env.incoming).toEqual([]);
    expect(g.nodes.get('agent')!.incoming.map((e) => e.from)).toEqual([{ node: 'env', port: 'observation' }]);
    expect(g.nodes.get('result')!.resolved).toBeUndefined();
    expect(g.nodes.get('result')!.isGraphOut).toBe(true);
  });

  it('orders by dependency, not by declaration', () => {
    const spec = good();
    spec.nodes.reverse();
    // Reversed: result, agent, env. env feeds both; among the two then ready, spec order decides.
    expect(validateGraph(spec, resolver).order).toEqual(['env', 'result', 'agent']);
  });

  it('names a duplicate node id', () => {
    const spec = good();
    spec.nodes.push({ id: 'agent', type: 'planner__act' });
    expect(problemsOf(spec)).toEqual([expect.stringMatching(/duplicate node id "agent" \(nodes\[1\] and nodes\[3\]\)/)]);
  });

  it('names an unknown type with a did-you-mean', () => {
    const spec = good();
    spec.nodes[1]!.type = 'planer__act';
    expect(problemsOf(spec)).toEqual([`node "agent": unknown type "planer__act" (did you mean "planner__act"?)`]);
  });

  it('names an edge endpoint that is not node.port, and an unknown node', () => {
    const spec = good();
    spec.edges.push({ from: 'envobservation', to: 'agent.x' }, { from: 'ennv.done', to: 'result.done' });
    const p = problemsOf(spec);
    expect(p).toContain(`edge "envobservation -> agent.x": "from" must be "node.port", got "envobservation"`);
    expect(p).toContain(`edge "ennv.done -> result.done": unknown node "ennv" (did you mean "env"?)`);
  });

  it('names unknown output and input ports with the ports the node has', () => {
    const spec = good();
    spec.edges[0] = { from: 'env.obs', to: 'agent.observaton' };
    const p = problemsOf(spec);
    expect(p).toContain(
      `edge "env.obs -> agent.observaton": node "env" (env_gridnav__step) has no output port "obs"; its outputs: observation, done, metrics`,
    );
    expect(p).toContain(
      `edge "env.obs -> agent.observaton": node "agent" (planner__act) has no input port "observaton" (did you mean "observation"?); its inputs: observation`,
    );
  });

  it('lets graphOut take any input port, but it has no outputs', () => {
    const spec = good();
    spec.edges.push({ from: 'env.done', to: 'result.anything_at_all' });
    expect(() => validateGraph(spec, resolver)).not.toThrow();
    spec.edges.push({ from: 'result.metrics', to: 'agent.observation' });
    expect(problemsOf(spec)).toEqual(
      expect.arrayContaining([expect.stringContaining('node "result" (graphOut) has no output port "metrics"')]),
    );
  });

  it('names an input port fed by two edges', () => {
    const spec = good();
    spec.edges.push({ from: 'env.done', to: 'agent.observation' });
    expect(problemsOf(spec)).toEqual([
      `input port "agent.observation" is fed by 2 edges: edge "env.observation -> agent.observation", edge "env.done -> agent.observation"`,
    ]);
  });

  it('names a required input left unconnected, but not an optional one', () => {
    const spec = good();
    spec.edges = spec.edges.filter((e) => e.to !== 'agent.observation' && e.to !== 'env.action');
    expect(problemsOf(spec)).toEqual([`node "agent" (planner__act): required input port "observation" is not connected`]);
  });

  it('names the nodes of a cycle made of non-loop edges', () => {
    const spec = good();
    spec.edges[1] = { from: 'agent.action', to: 'env.action' };
    expect(problemsOf(spec)).toEqual([`cycle without a loop edge: env -> agent -> env (mark one of its edges "loop": true)`]);
  });

  it('names a self-loop without the loop flag', () => {
    const r = memoryResolver({ n: { f: { inputs: ['x?'], outputs: ['y'] } } });
    const spec: GraphSpec = {
      name: 's',
      nodes: [
        { id: 'a', type: 'n__f' },
        { id: 'out', type: 'graphOut' },
      ],
      edges: [
        { from: 'a.y', to: 'a.x' },
        { from: 'a.y', to: 'out.y' },
      ],
    };
    expect(() => validateGraph(spec, r)).toThrow(/cycle without a loop edge: a -> a/);
    spec.edges[0]!.loop = true;
    expect(validateGraph(spec, r).order).toEqual(['a', 'out']);
  });

  it('refuses a graph without graphOut', () => {
    const spec = good();
    spec.nodes.pop();
    spec.edges.pop();
    expect(problemsOf(spec)).toEqual([`no "graphOut" node: add one to collect the episode's metrics`]);
  });

  it('refuses a step_budget that is not a positive integer', () => {
    for (const b of [0, -3, 2.5]) {
      expect(problemsOf({ ...good(), step_budget: b })).toEqual([`step_budget must be a positive integer, got ${b}`]);
    }
  });

  it('refuses a per_step_timeout_sec that is not a positive number of seconds up to the limit, and takes one that is', () => {
    for (const t of [0, -1, 3601, Number.NaN]) {
      expect(problemsOf({ ...good(), per_step_timeout_sec: t })).toEqual([
        `per_step_timeout_sec must be a positive number of seconds, at most 3600, got ${t}`,
      ]);
    }
    expect(() => validateGraph({ ...good(), per_step_timeout_sec: 600 }, resolver)).not.toThrow();
  });

  it('names a config key the function does not declare', () => {
    const spec = good();
    spec.nodes[1]!.config = { epsilom: 0.2 };
    expect(problemsOf(spec)).toEqual([
      `node "agent": unknown config key "epsilom" for planner__act (did you mean "epsilon"?); known keys: epsilon`,
    ]);
  });

  it('refuses config on graphOut, which would be frozen into the run and do nothing', () => {
    const spec = good();
    const out = spec.nodes.find((n) => n.type === 'graphOut')!;
    out.config = { x: 1 };
    expect(problemsOf(spec)).toEqual([`node "${out.id}": graphOut takes no config, got "x"`]);
  });

  it('collects every problem at once', () => {
    const spec = good();
    spec.step_budget = 0;
    spec.nodes[1]!.type = 'nope__nope';
    spec.nodes.pop();
    spec.edges.push({ from: 'x', to: 'y.z' });
    const p = problemsOf(spec);
    expect(p.length).toBeGreaterThanOrEqual(4);
    expect(p.join('\n')).toMatch(/step_budget/);
    expect(p.join('\n')).toMatch(/unknown type "nope__nope"/);
    expect(p.join('\n')).toMatch(/no "graphOut" node/);
    expect(p.join('\n')).toMatch(/"from" must be "node.port"/);
  });
});

describe('applyOverrides', () => {
  it('patches a copy and leaves the original alone', () => {
    const spec = good();
    const out = applyOverrides(spec, { agent: { epsilon: 0.3, extra: { a: 1 } }, env: { size: 9 } });
    expect(out.nodes[1]!.config).toEqual({ epsilon: 0.3, extra: { a: 1 } });
    expect(out.nodes[0]!.config).toEqual({ size: 9 });
    expect(spec.nodes[1]!.config).toEqual({ epsilon: 0.1 });
    expect(spec.nodes[0]!.config).toBeUndefined();
  });

  it('merges nested objects key by key', () => {
    const spec = good();
    spec.nodes[0]!.config = { opts: { a: 1, b: 2 } };
    expect(applyOverrides(spec, { env: { opts: { b: 3 } } }).nodes[0]!.config).toEqual({ opts: { a: 1, b: 3 } });
  });

  it('refuses an unknown node id, naming it and listing the nodes', () => {
    expect(() => applyOverrides(good(), { agnt: { epsilon: 1 } })).toThrow(BadInputError);
    expect(() => applyOverrides(good(), { agnt: { epsilon: 1 } })).toThrow(
      'override for unknown node "agnt" (did you mean "agent"?); graph "gridnav_planner" has nodes: env, agent, result',
    );
    expect(() => applyOverrides(good(), { agent: 3 })).toThrow(/node "agent" must be an object/);
  });
});

describe('parseSetFlags', () => {
  it('parses JSON values when they parse, strings otherwise, and nests dotted keys', () => {
    expect(
      parseSetFlags(['agent.epsilon=0.2', 'agent.mode=greedy', 'env.flags=[1,2]', 'env.opts.size=9', 'env.on=true', 'agent.name="x"']),
    ).toEqual({
      agent: { epsilon: 0.2, mode: 'greedy', name: 'x' },
      env: { flags: [1, 2], opts: { size: 9 }, on: true },
    });
  });

  it('names a malformed flag', () => {
    for (const f of ['agent', 'agent=1', '.x=1', 'agent.=1', 'a..b=1']) {
      expect(() => parseSetFlags([f])).toThrow(BadInputError);
      expect(() => parseSetFlags([f])).toThrow(`"${f}"`);
    }
    expect(() => parseSetFlags(['agent.__proto__.x=1'])).toThrow(/__proto__/);
  });
});
