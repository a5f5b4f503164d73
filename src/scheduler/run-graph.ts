/**
 * What the scheduler needs from a run's graph before queueing it: that it exists, takes the
 * overrides and validates, and which nodesets it uses (shared ones are hosted by the backend,
 * replicated ones size the run's estimate).
 */
import { lendable } from '../nodeset-registry/env-panel-nodeset.js';
import { BadInputError, CodedError, NotFoundError, RunInputError, errorMessage } from '../errors.js';
import { applyOverrides, validateGraph } from '../graph/graph.js';
import { GraphCatalog } from '../graph/graph-catalog.js';
import { NodesetRegistry, type NodesetEntry } from '../nodeset-registry/registry.js';
import { placedNodesets } from '../nodeset-registry/placement.js';
import { metricRangesOf } from '../graph/metric-ranges.js';
import type { GraphSpec, MetricRanges } from '../core/types.js';
import { missingApiKeys } from '../nodesets/llm/preflight.js';
import { assertRunPolicy, codeToolsOfGraph, type RunPolicy } from '../spec/run-policy.js';
import { resolveModels, type FrozenModel } from '../graph/model-setup.js';

/** Where graphs and nodesets are looked up. */
export interface GraphDirs {
  workspaceDir?: string | undefined;
  builtinGraphsDir?: string | undefined;
  builtinNodesetsDir?: string | undefined;
}

export interface RunGraphOptions extends GraphDirs {
  graphName: string;
  overrides?: Record<string, Record<string, unknown>> | undefined;
  /** The graph frozen at submit (overrides applied): validated as it is, the graph file is not read again. */
  frozen?: GraphSpec | undefined;
  /** How an error blames the overrides (the CLI: `--set`, or a run file's line). @default "overrides" */
  overridesLabel?: string | undefined;
  /** The operator's rules the run must keep (spec/run-policy.ts); unchecked when absent (a run its first start accepted). */
  policy?: RunPolicy | undefined;
}

export interface RunGraphInfo {
  registry: NodesetRegistry;
  /** Every nodeset the graph's nodes call, by name. */
  nodesets: NodesetEntry[];
  shared: string[];
  /** The graph the run evaluates: overrides applied, validated, each model-backed node's model keys resolved into its config (graph/model-setup.ts). */
  graph: GraphSpec;
  /** What each model-backed node asks: model, endpoint, sampling. */
  models: FrozenModel[];
  /** One line per model-backed node that resolves no model. */
  missingModels: string[];
  /** The declared range of each metric it reports (graph/metric-ranges.ts). */
  metricRanges: MetricRanges;
  /** The code-running tools the graph offers ("node.tool"), empty for none. */
  codeTools: string[];
}

/** Loads and validates the graph; any problem is a BAD_USER_INPUT error naming graphName or overrides. */
export async function inspectRunGraph(opts: RunGraphOptions): Promise<RunGraphInfo> {
  const where = {
    ...(opts.workspaceDir ? { workspaceDir: opts.workspaceDir } : {}),
  };
  const source = opts.frozen ? undefined : loadGraph(opts, where);
  const overridesLabel = opts.overridesLabel ?? 'overrides';
  const graph = opts.frozen ?? withOverrides(source!, opts.overrides, overridesLabel);
  let registry: NodesetRegistry;
  try {
    registry = await NodesetRegistry.scan({ ...where, ...(opts.builtinNodesetsDir ? { builtinDir: opts.builtinNodesetsDir } : {}) });
  } catch (err) {
    throw new CodedError('INTERNAL_SERVER_ERROR', `could not scan the nodesets: ${errorMessage(err)}`, { cause: err });
  }
  // Before validation: a refused key is refused as such, whatever else is wrong with the run.
  const codeTools = opts.policy
    ? assertRunPolicy({
        graph,
        overrides: opts.overrides,
        functionOf: (type) => registry.resolve(type)?.fn,
        policy: opts.policy,
        label: overridesLabel,
      })
    : codeToolsOfGraph(graph);
  let validated: ReturnType<typeof validateGraph>;
  try {
    validated = validateGraph(graph, registry);
  } catch (err) {
    // A graph that is valid until the overrides patch it is the overrides' fault (e.g. a config value of the wrong type).
    const blame = source && source !== graph && isValid(source, registry) ? overridesLabel : `graphName "${opts.graphName}"`;
    throw asBadInput(blame, err);
  }
  // As this run places them: a nodeset its config keeps light is served on the eval process's thread (admission counts it so).
  const nodesets = placedNodesets(validated, registry);
  const models = resolveModels(graph, registry);
  return {
    registry,
    nodesets,
    shared: nodesets.filter(lendable).map((e) => e.name),
    graph: models.graph,
    models: models.models,
    missingModels: models.missing,
    metricRanges: metricRangesOf(validated),
    codeTools,
  };
}

/**
 * What the graph's model nodes need from the server's environment (an API key, a model name).
 * Called at submit, after the graph and the episode selection are known good, so a run with a
 * mistake in both hears of the one it can fix in its own input first; a retry checks the same
 * of its frozen graph (which names its model unless written before models were frozen).
 */
export function assertModelSetup(graphName: string, info: Pick<RunGraphInfo, 'graph' | 'missingModels'>): void {
  const missing = [...missingApiKeys(info.graph), ...info.missingModels];
  if (missing.length > 0) throw new BadInputError(`graphName "${graphName}": ${missing.join('; ')}`);
}

/** The named graph from the catalog. */
function loadGraph(opts: RunGraphOptions, where: { workspaceDir?: string }): GraphSpec {
  try {
    return new GraphCatalog({ ...where, ...(opts.builtinGraphsDir ? { builtinDir: opts.builtinGraphsDir } : {}) }).load(opts.graphName);
  } catch (err) {
    if (err instanceof NotFoundError) throw new RunInputError(`graphName: ${err.message}`, 'graphName');
    throw asBadInput('graphName', err);
  }
}

/** The graph with the run's overrides applied (the same object when there are none). */
function withOverrides(graph: GraphSpec, overrides: RunGraphOptions['overrides'], label: string): GraphSpec {
  if (!overrides || Object.keys(overrides).length === 0) return graph;
  try {
    return applyOverrides(graph, overrides);
  } catch (err) {
    throw asBadInput(label, err);
  }
}

function isValid(graph: GraphSpec, registry: NodesetRegistry): boolean {
  try {
    validateGraph(graph, registry);
    return true;
  } catch {
    return false;
  }
}

function asBadInput(field: string, err: unknown): BadInputError {
  if (err instanceof BadInputError && err.message.startsWith(field)) return err;
  return new BadInputError(`${field}: ${errorMessage(err)}`, { cause: err });
}
