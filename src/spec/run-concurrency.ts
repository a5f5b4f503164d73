/**
 * runConcurrency: what bounds a run's concurrency, from its spec and its graph's placement.
 * Workers are CPU lanes (each with its own hosts of the replicated nodesets, counted by
 * admission); episodes in flight are how many plays wait at once. A graph whose every node
 * awaits I/O (a model call) plays many episodes per worker; a replicated env, whose panel state
 * is its worker's, plays one per worker. Every cap below what the run asked is named in
 * `limits`, so no default bounds a run without saying so.
 */
import type { ValidatedGraph } from '../graph/graph.js';
import type { NodesetManifest } from '../core/types.js';
import { heavyInRun } from '../nodeset-registry/placement.js';
import { MAX_SOCKETS } from '../host/host-client.js';
import { effectiveWorkerCount } from './effective-workers.js';
import { playCountOf } from './repeats.js';
import type { RunSpec } from './run-spec.js';

/** Episodes in flight by default where every node awaits I/O: enough to hide a model's latency, few enough for any endpoint's adaptive limit to settle. */
export const DEFAULT_IO_IN_FLIGHT = 256;
/** The config key of a node function that bounds its own calls in flight; unset, it follows the run's in-flight count. */
export const CONCURRENCY_CONFIG_KEY = 'max_concurrency';

/** One bound on the run's concurrency below what it asked. */
export interface ConcurrencyLimit {
  /** What bounds it: a nodeset, a node's config key (`llm.max_concurrency`), or `plays`. */
  name: string;
  limit: number;
  reason: string;
}

export interface RunConcurrency {
  /** CPU lanes: each worker has its own hosts of the replicated nodesets; admission counts cores by these. */
  workers: number;
  /** The most episodes one worker plays at once. */
  perWorker: number;
  /** Episodes in flight at once across the run, after every limit. */
  maxInFlight: number;
  /** What the run asked for (`maxInFlight`); null when it took the default. */
  asked: number | null;
  /** How the in-flight count was chosen, in words. */
  basis: string;
  /** Bounds below what the run asked (or below the in-flight count, for a node's own limit). */
  limits: ConcurrencyLimit[];
}

/** A nodeset as the run places it (placement.ts placedNodesets). */
export interface PlacedNodeset {
  name: string;
  manifest: NodesetManifest;
}

/**
 * The run's concurrency. `plays`: how many plays this process plays (a shard's or a retry's
 * indices); default every play of the spec.
 */
export function runConcurrency(
  spec: Pick<RunSpec, 'workerCount' | 'episodeCount' | 'repeats' | 'maxInFlight'>,
  graph: ValidatedGraph,
  used: readonly PlacedNodeset[],
  plays = playCountOf(spec),
): RunConcurrency {
  const workers = Math.max(1, Math.min(effectiveWorkerCount(spec), plays));
  const asked = spec.maxInFlight ?? null;
  const limits: ConcurrencyLimit[] = [];
  const replicated = used.filter((e) => e.manifest.parallelism === 'replicated');
  const awaitsIo = replicated.length === 0 && used.some((e) => e.manifest.modelKeys === true) && !used.some((e) => heavyInRun(e.manifest));
  let basis: string;
  let inFlight: number;
  if (asked !== null) {
    basis = 'asked by the run';
    inFlight = Math.max(asked, workers);
  } else if (awaitsIo) {
    basis = `default for a graph whose every node awaits I/O: ${DEFAULT_IO_IN_FLIGHT}, at least one per worker`;
    inFlight = Math.max(DEFAULT_IO_IN_FLIGHT, workers);
  } else {
    basis =
      replicated.length > 0
        ? `default: one per worker (${replicated.map((e) => e.name).join(', ')} is replicated)`
        : 'default: one per worker (not every node awaits I/O)';
    inFlight = workers;
  }
  if (replicated.length > 0 && inFlight > workers) {
    for (const e of replicated)
      limits.push({
        name: e.name,
        limit: workers,
        reason: `${e.name} is replicated: each worker's host holds its episode's panel state, so each worker plays one episode at a time (raise workerCount for more)`,
      });
    inFlight = workers;
  }
  if (inFlight > plays) {
    if (asked !== null) limits.push({ name: 'plays', limit: plays, reason: `the run has ${plays} play(s)` });
    inFlight = plays;
  }
  if (inFlight > MAX_SOCKETS)
    limits.push({
      name: 'host connections',
      limit: MAX_SOCKETS,
      reason: `calls to a nodeset served as a process of its own (a server's shared llm host, env_dataset, score) share at most ${MAX_SOCKETS} connections per host; more wait for one. Hosts in the eval process (a local run's llm thread) are not bound`,
    });
  for (const n of graph.nodes.values()) {
    const declared = n.resolved?.fn.config?.[CONCURRENCY_CONFIG_KEY];
    const own = n.node.config?.[CONCURRENCY_CONFIG_KEY];
    if (!declared || typeof own !== 'number' || own >= inFlight) continue;
    limits.push({
      name: `${n.node.id}.${CONCURRENCY_CONFIG_KEY}`,
      limit: own,
      reason: `node "${n.node.id}" sets ${CONCURRENCY_CONFIG_KEY} ${own}: at most ${own} of its calls wait on its endpoint at once, across every run on the machine; the other episodes queue for it`,
    });
  }
  return { workers, perWorker: Math.ceil(inFlight / workers), maxInFlight: inFlight, asked, basis, limits };
}

/** How many episodes worker `k` of the run plays at once: the in-flight count split as evenly as it goes, each worker at least one. */
export function episodesOfWorker(c: Pick<RunConcurrency, 'workers' | 'maxInFlight'>, k: number): number {
  const share = Math.floor(((k + 1) * c.maxInFlight) / c.workers) - Math.floor((k * c.maxInFlight) / c.workers);
  return Math.max(1, share);
}

/** One line for a run's log and `evalctl run`: the in-flight count, how it was chosen, and each limit that binds. */
export function describeConcurrency(c: RunConcurrency): string {
  const each = c.perWorker > 1 ? `, up to ${c.perWorker} each` : ', one each';
  const head = `concurrency: ${c.maxInFlight} episode(s) in flight on ${c.workers} worker(s)${each} (${c.basis})`;
  if (c.limits.length === 0) return head;
  return `${head}; bound by ${c.limits.map((l) => `${l.name} = ${l.limit}: ${l.reason}`).join('; ')}`;
}
