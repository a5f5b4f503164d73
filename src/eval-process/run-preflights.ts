/**
 * Before a run's first episode: each nodeset the graph calls that declares a `preflight` module
 * in its manifest checks what its nodes depend on (the llm nodeset: each model endpoint, once).
 * The eval process knows no nodeset's functions; it only calls the hook, with the environment
 * the run's hosts get, so a key is read where the hosts would read it and nowhere else.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CodedError, errorMessage } from '../errors.js';
import type { NodesetPreflight, PreflightNode } from '../core/types.js';
import type { ValidatedGraph } from '../graph/graph.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';

/** The longest one nodeset's preflight may take, whatever it does itself. */
export const PREFLIGHT_LIMIT_MS = 15_000;

export class PreflightError extends CodedError {
  constructor(nodeset: string, message: string, options?: { cause?: unknown }) {
    super('PREFLIGHT_FAILED', `preflight of nodeset "${nodeset}": ${message}`, options);
  }
}

/** Resolves when every preflight passed; rejects with the first failure (its own CodedError, else a PreflightError). */
export async function runPreflights(
  graph: ValidatedGraph,
  used: readonly NodesetEntry[],
  opts: { env: NodeJS.ProcessEnv; signal?: AbortSignal | undefined },
): Promise<void> {
  for (const entry of used) {
    if (!entry.manifest.preflight || !entry.dir) continue;
    const nodes: PreflightNode[] = [];
    for (const v of graph.nodes.values()) {
      if (v.resolved?.nodeset !== entry.name) continue;
      nodes.push({ id: v.node.id, function: v.resolved.fn.name, config: v.node.config ?? {} });
    }
    if (nodes.length === 0) continue;
    const check = await loadPreflight(entry);
    const limit = AbortSignal.timeout(PREFLIGHT_LIMIT_MS);
    const signal = opts.signal ? AbortSignal.any([opts.signal, limit]) : limit;
    try {
      await check(nodes, { env: opts.env, signal });
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (err instanceof CodedError) throw err;
      throw new PreflightError(entry.name, limit.aborted ? `no answer within ${PREFLIGHT_LIMIT_MS} ms` : errorMessage(err), {
        cause: err,
      });
    }
  }
}

async function loadPreflight(entry: NodesetEntry): Promise<NodesetPreflight> {
  const file = resolve(entry.dir, entry.manifest.preflight!);
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (err) {
    throw new PreflightError(entry.name, `cannot load its preflight module ${file}: ${errorMessage(err)}`, { cause: err });
  }
  if (typeof mod.default !== 'function')
    throw new PreflightError(entry.name, `its preflight module ${file} has no default export of a function`);
  return mod.default as NodesetPreflight;
}
