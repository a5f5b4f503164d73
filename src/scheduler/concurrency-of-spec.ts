/** concurrencyOfSpec: a submitted run's concurrency (spec/run-concurrency.ts), from its frozen graph and the nodesets at hand. */
import { validateGraph } from '../graph/graph.js';
import { placedNodesets } from '../nodeset-registry/placement.js';
import { NodesetRegistry, type NodesetEntry } from '../nodeset-registry/registry.js';
import { runConcurrency, type RunConcurrency } from '../spec/run-concurrency.js';
import { episodeIndicesOf } from '../spec/shards.js';
import { playCountOf } from '../spec/repeats.js';
import type { RunSpec } from '../store/types.js';

/** Null for a spec without a frozen graph, or whose graph these nodesets no longer validate. */
export function concurrencyOfSpec(spec: RunSpec, nodesets: readonly NodesetEntry[]): RunConcurrency | null {
  if (!spec.graph) return null;
  const registry = new NodesetRegistry([...nodesets]);
  try {
    const graph = validateGraph(spec.graph, registry);
    const plays = spec.episodeIndices || spec.audit || spec.shard ? episodeIndicesOf(spec).length : playCountOf(spec);
    return runConcurrency(spec, graph, placedNodesets(graph, registry), plays);
  } catch {
    return null;
  } finally {
    registry.close();
  }
}
