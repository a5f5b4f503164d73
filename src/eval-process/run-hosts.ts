/**
 * The hosts of one run: the shared nodesets it borrows by URL (never stopped) or starts itself
 * when nobody lends them (the CLI case), and the worker pool of replicated env hosts.
 */
import { availableParallelism } from 'node:os';
import { startHost, type RunHost } from './in-process-host.js';
import type { NodesetEntry, NodesetRegistry } from '../nodeset-registry/registry.js';
import type { SharedUrls } from '../store/types.js';
import { EnvWorkerPool, type HostInfo } from './env-worker-pool.js';

export interface StartRunHostsOptions {
  registry: NodesetRegistry;
  /** Shared nodesets the graph uses. */
  shared: readonly NodesetEntry[];
  /** Replicated nodesets the graph uses: one host per worker each. */
  replicated: readonly NodesetEntry[];
  /** Shared nodesets lent by the backend: name → URL. */
  lent: SharedUrls;
  workerCount: number;
  /** The run's id of the first worker here (a play lane's share of the workers). @default 0 */
  firstWorkerId?: number;
  /** The run has more workers than these (other lanes hold them): tag the hosts by worker even if here is one. */
  tagged?: boolean;
  /**
   * CPU cores of the machine: where there is one per host to boot, every host boots at once;
   * elsewhere the other workers' hosts boot in lanes, a host per core less one. @default os.availableParallelism()
   */
  cores?: number;
  env?: Record<string, string>;
  signal?: AbortSignal;
  onStderr?(line: string): void;
  onHostStarted?(host: HostInfo): void;
}

export interface RunHosts {
  pool: EnvWorkerPool;
  /** Every shared nodeset the graph uses → the URL its calls go to. */
  sharedUrls: Record<string, string>;
  /** Shared hosts this run started (and will stop). */
  owned: readonly RunHost[];
  /** Every host process this run started (hosts served in-process are not processes of their own). */
  list(): HostInfo[];
  /** Points a lent shared nodeset at its new URL (its host was restarted there); false for a nodeset the run does not use. */
  moveShared(nodeset: string, url: string): boolean;
  /** Stops what this run started; borrowed hosts are left alone. Idempotent. */
  close(): Promise<void>;
}

const info = (h: RunHost): HostInfo => ({ nodeset: h.nodeset, tag: h.tag, url: h.url, pid: h.pid });

/**
 * Starts (or borrows) the shared hosts and worker 0's env hosts together and resolves when they
 * are up; the other workers' hosts wait for `pool.startOthers()`, unless the machine has a core
 * for every host to boot: then they all boot at once. On failure, everything
 * already started is stopped before the error is thrown.
 */
export async function startRunHosts(o: StartRunHostsOptions): Promise<RunHosts> {
  const owned: RunHost[] = [];
  const sharedStarts = o.shared.map(async (entry): Promise<[string, string]> => {
    const url = o.lent[entry.name];
    if (url) {
      await o.registry.registerRemote(entry.name, url, o.signal);
      return [entry.name, url];
    }
    const host = await startHost({
      entry,
      ...(o.env ? { env: o.env } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      onStderr: (line) => o.onStderr?.(`[${entry.name}] ${line}`),
    });
    owned.push(host);
    if (!host.inProcess) o.onHostStarted?.(info(host));
    o.registry.attachUrl(entry.name, host.url);
    return [entry.name, host.url];
  });
  const cores = o.cores ?? availableParallelism();
  const toBoot = o.workerCount * o.replicated.length + o.shared.filter((e) => !o.lent[e.name]).length;
  const poolStart = EnvWorkerPool.open({
    workerCount: o.workerCount,
    ...(o.firstWorkerId ? { firstWorkerId: o.firstWorkerId } : {}),
    ...(o.tagged ? { tagged: true } : {}),
    startAllAtOnce: toBoot <= cores,
    // A lane boots a slot's hosts together: one host per core, less one core for the episodes already playing on slot 0 and this process.
    bootLanes: Math.max(1, Math.floor((cores - 1) / Math.max(1, o.replicated.length))),
    nodesets: o.replicated,
    ...(o.env ? { env: o.env } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.onStderr ? { onStderr: o.onStderr } : {}),
    ...(o.onHostStarted ? { onHostStarted: o.onHostStarted } : {}),
  });
  // Every start settles before any failure is thrown, so no host is left behind unstopped.
  const [shared, pool] = await Promise.all([
    Promise.allSettled(sharedStarts),
    poolStart.then(
      (p) => ({ p }),
      (err: unknown) => ({ err }),
    ),
  ]);
  const failed = shared.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if ('err' in pool || failed) {
    await Promise.allSettled([...('p' in pool ? [pool.p.close()] : []), ...owned.map((h) => h.stop())]);
    throw 'err' in pool ? pool.err : failed!.reason;
  }
  const sharedUrls: Record<string, string> = Object.fromEntries(shared.map((r) => (r as PromiseFulfilledResult<[string, string]>).value));
  // One worker: its hosts are also the nodesets' registered URLs.
  if (o.workerCount === 1)
    for (const [nodeset, url] of Object.entries(pool.p.urlsOf(pool.p.firstWorkerId))) o.registry.attachUrl(nodeset, url);
  let closing: Promise<void> | undefined;
  return {
    pool: pool.p,
    sharedUrls,
    owned,
    list: () => [...pool.p.hosts(), ...owned.filter((h) => !h.inProcess).map(info)],
    moveShared(nodeset, url) {
      if (!sharedUrls[nodeset]) return false;
      sharedUrls[nodeset] = url;
      o.registry.attachUrl(nodeset, url);
      return true;
    },
    close() {
      closing ??= Promise.allSettled([pool.p.close(), ...owned.map((h) => h.stop())]).then(() => {});
      return closing;
    },
  };
}
