import { describe, expect, it } from 'vitest';
import { validateGraph } from '../../src/graph/graph.js';
import { GraphCatalog } from '../../src/graph/graph-catalog.js';
import { metricRangesOf } from '../../src/graph/metric-ranges.js';
import { NodesetRegistry } from '../../src/nodeset-registry/registry.js';
import type { GraphSpec } from '../../src/core/types.js';
import { memoryResolver } from '../fixtures/memory-resolver.js';

const resolver = memoryResolver({
  env: {
    step: {
      inputs: ['action?'],
      outputs: ['observation', 'metrics', 'extra'],
      outputMetrics: { metrics: { success: { min: 0, max: 1 }, steps: { min: 0 } }, extra: { bonus: { min: 0, max: 2 } } },
    },
  },
  judge: {
    grade: {
      inputs: ['observation'],
      outputs: ['action', 'metrics', 'note'],
      outputMetrics: { metrics: { success: { min: -1, max: 1 }, quality: { min: 0, max: 10 } }, note: { ignored: { min: 0 } } },
    },
  },
});

const graph = (edges: GraphSpec['edges']): GraphSpec => ({
  name: 'g',
  nodes: [
    { id: 'env', type: 'env__step' },
    { id: 'judge', type: 'judge__grade' },
    { id: 'result', type: 'graphOut' },
    { id: 'more', type: 'graphOut' },
    { id: 'bonus', type: 'graphOut' },
  ],
  edges: [{ from: 'env.observation', to: 'judge.observation' }, { from: 'judge.action', to: 'env.action', loop: true }, ...edges],
});

describe('metricRangesOf', () => {
  it("reads the ranges of the ports that feed a graphOut's metrics, names sorted", () => {
    const g = validateGraph(graph([{ from: 'env.metrics', to: 'result.metrics' }]), resolver);
    expect(metricRangesOf(g)).toEqual({ steps: { min: 0 }, success: { min: 0, max: 1 } });
    expect(Object.keys(metricRangesOf(g))).toEqual(['steps', 'success']);
  });

  it('covers both ranges when two sources declare one metric, and follows any port routed to metrics', () => {
    const g = validateGraph(
      graph([
        { from: 'env.metrics', to: 'result.metrics' },
        { from: 'judge.metrics', to: 'more.metrics' },
        { from: 'env.extra', to: 'bonus.metrics' },
      ]),
      resolver,
    );
    expect(metricRangesOf(g)).toEqual({
      bonus: { min: 0, max: 2 },
      quality: { min: 0, max: 10 },
      steps: { min: 0 },
      success: { min: -1, max: 1 },
    });
  });

  it("ignores ports that do not reach a graphOut's metrics port", () => {
    const g = validateGraph(graph([{ from: 'judge.note', to: 'result.note' }]), resolver);
    expect(metricRangesOf(g)).toEqual({});
  });

  it('gives the built-in graphs the ranges their nodesets declare', async () => {
    const registry = await NodesetRegistry.scan({});
    try {
      const catalog = new GraphCatalog({});
      const gridnav = metricRangesOf(validateGraph(catalog.load('gridnav_planner'), registry));
      expect(gridnav).toEqual({
        distance_to_goal: { min: 0, goal: 'min' },
        spl: { min: 0, max: 1, goal: 'max' },
        steps: { min: 0, goal: 'min' },
        success: { min: 0, max: 1, goal: 'max', primary: true },
      });
      const qa = metricRangesOf(validateGraph(catalog.load('qa_llm'), registry));
      expect(qa).toMatchObject({
        score: { min: 0, max: 1, missing: 0 },
        correct: { min: 0, max: 1, missing: 0 },
        llm_calls: { min: 0 },
        prompt_tokens: { min: 0 },
      });
    } finally {
      registry.close();
    }
  });
});
