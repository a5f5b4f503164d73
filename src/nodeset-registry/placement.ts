/**
 * Where one run serves a nodeset's hosts, as far as the run's graph decides it: a manifest's
 * `inlineUnless` names the config keys that make its handlers heavy or unsafe on the eval
 * process's own thread (CPU work per call, `process.exit`). Read by the eval process when it
 * starts the hosts and by admission when it estimates a run's cores.
 */
import { isDeepStrictEqual } from 'node:util';
import type { NodesetManifest } from '../core/types.js';
import type { ValidatedGraph } from '../graph/graph.js';
import type { NodesetEntry, NodesetRegistry } from './registry.js';

/**
 * `entry` as one run places it: with the manifest's `inlineUnless`, when none of `configs` (the
 * config of every node of the run's graph that calls the nodeset) sets one of those keys to a
 * value other than its default, the hosts run on the eval process's thread (`inProcess: true`):
 * a latency-bound env then costs no thread hand-off per call (docs/throughput.md). Otherwise,
 * and without `inlineUnless`, `entry` unchanged.
 */
export function placeForRun<E extends { manifest: NodesetManifest }>(entry: E, configs: readonly Record<string, unknown>[]): E {
  const { inlineUnless, functions } = entry.manifest;
  if (!inlineUnless || entry.manifest.inProcess === true) return entry;
  const defaults = new Map<string, unknown>();
  for (const fn of functions) for (const [key, spec] of Object.entries(fn.config ?? {})) defaults.set(key, spec.default);
  const heavy = configs.some((config) =>
    inlineUnless.some((key) => config[key] !== undefined && !isDeepStrictEqual(config[key], defaults.get(key))),
  );
  return heavy ? entry : { ...entry, manifest: { ...entry.manifest, inProcess: true } };
}

/** The config of every node of `graph` that calls `nodeset`. */
function configsOf(graph: ValidatedGraph, nodeset: string): Record<string, unknown>[] {
  return [...graph.nodes.values()].filter((n) => n.resolved?.nodeset === nodeset).map((n) => n.node.config ?? {});
}

/** The nodesets `graph`'s nodes call, by name, each as the run places it (placeForRun). */
export function placedNodesets(graph: ValidatedGraph, registry: NodesetRegistry): NodesetEntry[] {
  const names = new Set<string>();
  for (const n of graph.nodes.values()) if (n.resolved) names.add(n.resolved.nodeset);
  return [...names].sort().map((name) => placeForRun(registry.get(name), configsOf(graph, name)));
}

/** Whether a JS-module nodeset placed by placeForRun runs on the eval process's own thread. */
export const servedInline = (manifest: NodesetManifest): boolean => manifest.module !== undefined && manifest.inProcess === true;
