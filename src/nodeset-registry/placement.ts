/**
 * Where one run serves a nodeset's hosts, as far as the run's graph decides it: a manifest's
 * `inlineUnless` names the config keys that make its handlers unsafe on the eval process's own
 * thread (`process.exit`), `heavyWith` those that make them spend CPU per call. Read by the
 * eval process when it starts the hosts and by admission when it estimates a run's cores.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FunctionSpec, NodesetManifest } from '../core/types.js';
import type { ValidatedGraph } from '../graph/graph.js';
import type { NodesetEntry, NodesetRegistry } from './registry.js';

/** One node of a run's graph that calls a nodeset: its config, and the function it calls (whose keys' defaults count as unset). */
export interface NodeUse {
  config: Record<string, unknown>;
  fn: FunctionSpec;
}

/**
 * `entry` as one run places it: with the manifest's `inlineUnless`, when no node in `uses` sets
 * one of those keys (absent, `null` or the key's default, as graph validation reads them), the
 * hosts run on the eval process's thread (`inProcess: true`): a light env then costs no
 * thread hand-off per call (docs/throughput.md). Otherwise, and without `inlineUnless`, `entry`
 * as declared. The placed manifest keeps `heavyWith` only when a node sets one of its keys: a
 * heavy nodeset in this run (admission counts its cores per worker).
 */
export function placeForRun<E extends { manifest: NodesetManifest }>(entry: E, uses: readonly NodeUse[]): E {
  const { inlineUnless, heavyWith } = entry.manifest;
  const sets = (keys: readonly string[]) =>
    uses.some(({ config, fn }) => keys.some((key) => config[key] != null && !isDeepStrictEqual(config[key], fn.config?.[key]?.default)));
  const inline = inlineUnless !== undefined && (entry.manifest.inProcess === true || !sets(inlineUnless));
  const heavy = heavyWith !== undefined && sets(heavyWith);
  if (!inline && (heavyWith === undefined || heavy)) return entry;
  const { heavyWith: _heavy, ...rest } = entry.manifest;
  return { ...entry, manifest: { ...rest, ...(inline ? { inProcess: true } : {}), ...(heavy ? { heavyWith } : {}) } };
}

/** Every node of `graph` that calls `nodeset`. */
function usesOf(graph: ValidatedGraph, nodeset: string): NodeUse[] {
  const uses: NodeUse[] = [];
  for (const n of graph.nodes.values()) if (n.resolved?.nodeset === nodeset) uses.push({ config: n.node.config ?? {}, fn: n.resolved.fn });
  return uses;
}

/** The nodesets `graph`'s nodes call, by name, each as the run places it (placeForRun). */
export function placedNodesets(graph: ValidatedGraph, registry: NodesetRegistry): NodesetEntry[] {
  const names = new Set<string>();
  for (const n of graph.nodes.values()) if (n.resolved) names.add(n.resolved.nodeset);
  return [...names].sort().map((name) => placeForRun(registry.get(name), usesOf(graph, name)));
}

/** Whether a JS-module nodeset placed by placeForRun runs on the eval process's own thread. */
export const servedInline = (manifest: NodesetManifest): boolean => manifest.module !== undefined && manifest.inProcess === true;

/** Whether a nodeset placed by placeForRun spends CPU per call in this run (one of its `heavyWith` keys is set). */
export const heavyInRun = (manifest: NodesetManifest): boolean => (manifest.heavyWith?.length ?? 0) > 0;
