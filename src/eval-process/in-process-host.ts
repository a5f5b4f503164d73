/**
 * startHost: a nodeset's host for this run, as a child process (spawnHost) or, for a nodeset
 * whose manifest declares `"inProcess": true`, served inside this process. An in-process host
 * is the same host (createHost: panel, batcher, routes) reached without a socket: every call
 * still crosses as JSON text, so results are those of the child process, without the four
 * process hand-offs a step's two calls cost (the bulk of a light step's CPU; docs/throughput.md).
 */
import { HostError, errorMessage } from '../errors.js';
import { createHost } from '../host/host.js';
import { registerInProcessHost, unregisterInProcessHost } from '../host/in-process-hosts.js';
import { spawnHost, type HostEntry, type HostExit, type HostProcess, type SpawnHostOptions } from '../host/host-process.js';
import { startThreadHost } from '../host/thread-host.js';
import { loadNodesetModule } from '../nodeset-registry/nodeset-module.js';
import { servedInline } from '../nodeset-registry/placement.js';
import type { NodesetModule } from '../core/types.js';

/**
 * `0`: every host is a child process, whatever its manifest declares. A comma-separated list of
 * nodeset names: those are served in-process too (a JS-module nodeset the user knows to be
 * light for this run, e.g. `env_gridnav` without `step_compute_ms` or `crash_at_step`).
 */
export const IN_PROCESS_ENV = 'EVAL_IN_PROCESS_HOSTS';

/** A host this run started: a child process, or one served in this process, on its thread or a worker thread (then `pid` is this process's and must not be signalled). */
export type RunHost = HostProcess & { readonly inProcess: boolean };

/**
 * Where `entry`'s host runs: `inline` (on this process's thread: the manifest's `"inProcess":
 * true`, or named by IN_PROCESS_ENV), `thread` (a worker thread of this process: `"inProcess":
 * "thread"`) or `process` (a child process: every nodeset that is not a JS module, and every
 * nodeset when IN_PROCESS_ENV is `0`).
 */
export function hostMode(entry: HostEntry, env: Record<string, string> | undefined): 'inline' | 'thread' | 'process' {
  const setting = (env?.[IN_PROCESS_ENV] ?? process.env[IN_PROCESS_ENV] ?? '').trim();
  if (entry.manifest.module === undefined || setting === '0') return 'process';
  if (servedInline(entry.manifest) || setting.split(',').some((name) => name.trim() === entry.name)) return 'inline';
  return entry.manifest.inProcess === 'thread' ? 'thread' : 'process';
}

/** Whether `entry` is served on this process's own thread (hostMode `inline`). */
export function runsInProcess(entry: HostEntry, env: Record<string, string> | undefined): boolean {
  return hostMode(entry, env) === 'inline';
}

/** One module instance per folder and process, initialised once, shared by every in-process host of the nodeset. */
const modules = new Map<string, Promise<NodesetModule>>();

function moduleOf(entry: HostEntry): Promise<NodesetModule> {
  let mod = modules.get(entry.dir);
  if (!mod) {
    mod = (async () => {
      const m = await loadNodesetModule(entry.dir, entry.manifest);
      if (!m.forHost) await m.init?.({ dir: entry.dir, manifest: entry.manifest });
      return m;
    })();
    modules.set(entry.dir, mod);
    // A module that failed to load may be fixed by the next run of a long-lived process.
    mod.catch(() => modules.delete(entry.dir));
  }
  return mod;
}

/** Starts `entry`'s host where hostMode says: on this thread, in a worker thread, or as a child process. */
export async function startHost(options: SpawnHostOptions): Promise<RunHost> {
  const mode = hostMode(options.entry, options.env);
  if (mode === 'process') return Object.assign(await spawnHost(options), { inProcess: false });
  if (mode === 'thread') return Object.assign(await startThreadHost(options), { inProcess: true });
  options.signal?.throwIfAborted();
  const { entry, tag } = options;
  const label = tag === undefined ? entry.name : `${entry.name}#${tag}`;
  let mod: NodesetModule;
  try {
    mod = await moduleOf(entry);
    // A module whose state is one run's (env_dataset's datasets, read from the run's workspace) gets an instance per host.
    if (mod.forHost) mod = await mod.forHost({ dir: entry.dir, manifest: entry.manifest, env: { ...process.env, ...options.env } });
  } catch (err) {
    throw new HostError(`host ${label} could not start in-process: ${errorMessage(err)}`, { cause: err });
  }
  const delay = Number(options.env?.EVAL_HOST_INJECT_DELAY_MS ?? process.env.EVAL_HOST_INJECT_DELAY_MS) || 0;
  const host = createHost({
    manifest: entry.manifest,
    dir: entry.dir,
    module: mod,
    injectDelayMs: delay,
    ...(tag !== undefined ? { tag } : {}),
  });
  const url = registerInProcessHost(label, host);
  let alive = true;
  let exit!: (e: HostExit) => void;
  const exited = new Promise<HostExit>((resolve) => (exit = resolve));
  let stopping: Promise<void> | undefined;
  return {
    nodeset: entry.name,
    tag: tag ?? null,
    url,
    pid: process.pid,
    inProcess: true,
    get alive() {
      return alive;
    },
    exited,
    stop() {
      stopping ??= (async () => {
        alive = false;
        unregisterInProcessHost(url);
        await host.close();
        exit({ code: 0, signal: null });
      })();
      return stopping;
    },
  };
}
