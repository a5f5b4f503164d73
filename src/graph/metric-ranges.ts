/**
 * metricRangesOf: the declared range of each metric a graph reports, read from the manifests of
 * the nodes that feed its graph-scope `graphOut` nodes' `metrics` ports (an output port's
 * `metrics` declaration). A run freezes them into its spec with the graph.
 */
import type { MetricRange, MetricRanges } from '../core/types.js';
import { coveringRange } from '../stats/intervals.js';
import type { ValidatedGraph } from './graph.js';

/** The port of a graphOut whose object is flattened into the episode's metrics. */
const METRICS_PORT = 'metrics';

/**
 * Metric name → declared range, names sorted. Two sources declaring one name give the range
 * covering both (an open bound on either side stays open). Undeclared metrics are absent.
 */
export function metricRangesOf(graph: ValidatedGraph): MetricRanges {
  const found = new Map<string, MetricRange>();
  for (const id of graph.graphOuts) {
    const sink = graph.nodes.get(id);
    if (!sink) continue;
    for (const e of [...sink.incoming, ...sink.loopIncoming]) {
      if (e.to.port !== METRICS_PORT) continue;
      const port = graph.nodes.get(e.from.node)?.resolved?.fn.outputs.find((p) => p.name === e.from.port);
      for (const [name, range] of Object.entries(port?.metrics ?? {})) {
        const seen = found.get(name);
        found.set(name, seen ? coveringRange(seen, range) : { ...range });
      }
    }
  }
  // The graph's own word on direction and the primary metric wins over the nodesets'.
  for (const [name, goal] of Object.entries(graph.spec.metric_goals ?? {})) found.set(name, { ...found.get(name), goal });
  const primary = graph.spec.primary_metric;
  if (primary !== undefined) {
    for (const [name, r] of found) if (r.primary && name !== primary) found.set(name, withoutPrimary(r));
    found.set(primary, { ...found.get(primary), primary: true });
  }
  const out: MetricRanges = {};
  for (const name of [...found.keys()].sort()) out[name] = found.get(name)!;
  return out;
}

function withoutPrimary(r: MetricRange): MetricRange {
  const { primary: _, ...rest } = r;
  return rest;
}
