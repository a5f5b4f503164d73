/**
 * The backend's shared nodeset hosts (model servers): one process per shared nodeset in use,
 * started on first need, refcounted by the queued and running runs that borrow it, unloaded
 * only after an idle grace with no references, restarted when it dies while referenced, and
 * killed (then restarted the same way) when it stops answering /health while referenced: a hung
 * model server otherwise times out every later call of every run that borrows it.
 */
import { errorMessage } from '../../errors.js';
import type { SharedHostStatus } from '../types.js';

/** A started host, as `spawnHost` returns it. */
export interface SharedHostProcess {
  url: string;
  pid: number;
  readonly alive: boolean;
  exited: Promise<unknown>;
  stop(graceMs?: number): Promise<void>;
}

export interface SharedHostManagerOptions {
  /** Starts the host of one shared nodeset. */
  startHost(nodeset: string): Promise<SharedHostProcess>;
  /** How long a host with no reference stays up before the drain step stops it. @default 60000 */
  idleMs?: number;
  /** Grace between SIGTERM and SIGKILL when stopping a host. @default 2000 */
  stopGraceMs?: number;
  /** Asks the host at `url` for /health; rejects when it does not answer. */
  health?(url: string, signal: AbortSignal): Promise<unknown>;
  /** A referenced host that has answered no /health for this long is killed and restarted. 0: never. @default 60000 */
  hungAfterMs?: number;
  /** Longest wait for one /health answer. @default 5000 */
  healthTimeoutMs?: number;
  /** A host died and came back on a new URL. */
  onRestart?(nodeset: string, url: string): void;
  /** A host died and could not be started again. */
  onLost?(nodeset: string, error: unknown): void;
  logger?: { info(message: string): void; warn(message: string): void };
}

interface Slot {
  nodeset: string;
  host: SharedHostProcess | null;
  /** The start (or restart) in progress. */
  starting: Promise<SharedHostProcess> | null;
  holders: Set<string>;
  idleSinceMs: number | null;
  restarts: number;
  /** Set when we stop it on purpose, so its exit is not taken for a crash. */
  stopping: boolean;
  /** When the host first failed to answer /health since its last answer; null while it answers. */
  unansweredSinceMs: number | null;
  /** A /health request in flight. */
  checking: boolean;
}

/** Restarts within this window count as a crash loop. */
const CRASH_WINDOW_MS = 10_000;
const MAX_RESTARTS_IN_WINDOW = 3;

export class SharedHostManager {
  private readonly slots = new Map<string, Slot>();
  private readonly opts: SharedHostManagerOptions;
  private readonly idleMs: number;
  private readonly recentRestarts = new Map<string, number[]>();
  private readonly stopping = new Set<Promise<void>>();
  private closed = false;

  constructor(opts: SharedHostManagerOptions) {
    this.opts = opts;
    this.idleMs = opts.idleMs ?? 60_000;
  }

  /**
   * Takes a reference on each nodeset for `holder` (a run id), starting hosts that are not up.
   * Resolves with their URLs. Taking the same reference twice is harmless.
   */
  async acquire(nodesets: readonly string[], holder: string): Promise<Record<string, string>> {
    if (this.closed) throw new Error('the shared host manager is closed');
    for (const name of nodesets) {
      const slot = this.slot(name);
      slot.holders.add(holder);
      slot.idleSinceMs = null;
    }
    try {
      const urls: Record<string, string> = {};
      await Promise.all(
        nodesets.map(async (name) => {
          urls[name] = (await this.ensure(this.slot(name))).url;
        }),
      );
      return urls;
    } catch (err) {
      this.release(holder, nodesets);
      throw err;
    }
  }

  /** Drops `holder`'s references (all of them, or on the nodesets given). Idempotent. */
  release(holder: string, nodesets?: readonly string[]): void {
    const now = Date.now();
    for (const slot of this.slots.values()) {
      if (nodesets && !nodesets.includes(slot.nodeset)) continue;
      if (slot.holders.delete(holder) && slot.holders.size === 0) slot.idleSinceMs = now;
    }
  }

  /** URLs of the hosts that are up, by nodeset. */
  urls(nodesets?: readonly string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const slot of this.slots.values()) {
      if (nodesets && !nodesets.includes(slot.nodeset)) continue;
      if (slot.host?.alive) out[slot.nodeset] = slot.host.url;
    }
    return out;
  }

  /** Nodesets `holder` holds a reference on. */
  heldBy(holder: string): string[] {
    return [...this.slots.values()].filter((s) => s.holders.has(holder)).map((s) => s.nodeset);
  }

  list(): SharedHostStatus[] {
    return [...this.slots.values()].map((s) => ({
      nodeset: s.nodeset,
      url: s.host?.alive ? s.host.url : null,
      pid: s.host?.alive ? s.host.pid : null,
      holders: [...s.holders],
      idleSince: s.idleSinceMs === null ? null : new Date(s.idleSinceMs).toISOString(),
      restarts: s.restarts,
    }));
  }

  /**
   * Starts stopping every host idle for longer than the grace (the stops finish in the
   * background; close() waits for them). The scheduler's tick calls this last.
   */
  drainIdle(now = Date.now()): string[] {
    const stopped: string[] = [];
    for (const slot of [...this.slots.values()]) {
      if (slot.holders.size > 0 || slot.idleSinceMs === null || now - slot.idleSinceMs < this.idleMs) continue;
      if (slot.starting) continue;
      this.slots.delete(slot.nodeset);
      if (slot.host) {
        slot.stopping = true;
        stopped.push(slot.nodeset);
        this.opts.logger?.info(
          `shared host ${slot.nodeset} (pid ${slot.host.pid}) unloaded after ${Math.round((now - slot.idleSinceMs) / 1000)} s idle`,
        );
        const stopping = slot.host.stop(this.opts.stopGraceMs ?? 2000).catch(() => {});
        this.stopping.add(stopping);
        void stopping.finally(() => this.stopping.delete(stopping));
      }
    }
    return stopped;
  }

  /**
   * Asks each referenced host for /health (one request at a time per host; the scheduler's tick
   * calls this). A host silent for `hungAfterMs` is killed: its exit restarts it like a crash, and
   * the runs holding it are told the new URL. A slow answer counts as an answer.
   */
  checkHealth(now = Date.now()): void {
    const { health } = this.opts;
    const hungAfterMs = this.opts.hungAfterMs ?? 60_000;
    if (!health || hungAfterMs <= 0 || this.closed) return;
    for (const slot of this.slots.values()) {
      const host = slot.host;
      // A host no run uses is not judged: its silence so far counts for nothing once a run takes it again.
      if (slot.holders.size === 0) slot.unansweredSinceMs = null;
      if (!host?.alive || slot.holders.size === 0 || slot.stopping || slot.checking) continue;
      if (slot.unansweredSinceMs !== null && now - slot.unansweredSinceMs >= hungAfterMs) {
        this.opts.logger?.warn(
          `shared host ${slot.nodeset} (pid ${host.pid}) answered no /health for ${Math.round((now - slot.unansweredSinceMs) / 1000)} s with ${slot.holders.size} run(s) using it; killing it to restart it`,
        );
        slot.unansweredSinceMs = null;
        void host.stop(this.opts.stopGraceMs ?? 2000).catch(() => {});
        continue;
      }
      slot.checking = true;
      health(host.url, AbortSignal.timeout(this.opts.healthTimeoutMs ?? 5000)).then(
        () => {
          slot.checking = false;
          if (slot.host === host) slot.unansweredSinceMs = null;
        },
        () => {
          slot.checking = false;
          if (slot.host === host && host.alive) slot.unansweredSinceMs ??= now;
        },
      );
    }
  }

  /** Stops every host. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const slots = [...this.slots.values()];
    this.slots.clear();
    await Promise.allSettled(
      slots.map(async (slot) => {
        slot.stopping = true;
        const host = slot.host ?? (await slot.starting?.catch(() => null)) ?? null;
        await host?.stop(this.opts.stopGraceMs ?? 2000);
      }),
    );
    await Promise.allSettled([...this.stopping]);
  }

  private slot(nodeset: string): Slot {
    let slot = this.slots.get(nodeset);
    if (!slot) {
      slot = {
        nodeset,
        host: null,
        starting: null,
        holders: new Set(),
        idleSinceMs: null,
        restarts: 0,
        stopping: false,
        unansweredSinceMs: null,
        checking: false,
      };
      this.slots.set(nodeset, slot);
    }
    return slot;
  }

  private ensure(slot: Slot): Promise<SharedHostProcess> {
    if (slot.host?.alive) return Promise.resolve(slot.host);
    slot.starting ??= this.opts
      .startHost(slot.nodeset)
      .then((host) => {
        if (this.closed || slot.stopping || this.slots.get(slot.nodeset) !== slot) {
          void host.stop(this.opts.stopGraceMs ?? 2000);
          throw new Error(`shared host ${slot.nodeset} was stopped while it started`);
        }
        slot.host = host;
        slot.unansweredSinceMs = null;
        this.opts.logger?.info(`shared host ${slot.nodeset} up at ${host.url} (pid ${host.pid})`);
        void host.exited.then(() => this.onExit(slot, host));
        return host;
      })
      .finally(() => {
        slot.starting = null;
      });
    return slot.starting;
  }

  private onExit(slot: Slot, host: SharedHostProcess): void {
    if (slot.host !== host) return;
    slot.host = null;
    if (this.closed || slot.stopping) return;
    if (slot.holders.size === 0) {
      this.slots.delete(slot.nodeset);
      this.opts.logger?.warn(`shared host ${slot.nodeset} (pid ${host.pid}) exited while idle`);
      return;
    }
    const now = Date.now();
    const recent = (this.recentRestarts.get(slot.nodeset) ?? []).filter((t) => now - t < CRASH_WINDOW_MS);
    if (recent.length >= MAX_RESTARTS_IN_WINDOW) {
      this.opts.logger?.warn(`shared host ${slot.nodeset} died ${recent.length + 1} times in ${CRASH_WINDOW_MS / 1000} s; not restarting`);
      this.opts.onLost?.(slot.nodeset, new Error('crash loop'));
      return;
    }
    recent.push(now);
    this.recentRestarts.set(slot.nodeset, recent);
    slot.restarts++;
    this.opts.logger?.warn(`shared host ${slot.nodeset} (pid ${host.pid}) died with ${slot.holders.size} run(s) using it; restarting`);
    this.ensure(slot).then(
      (next) => this.opts.onRestart?.(slot.nodeset, next.url),
      (err: unknown) => {
        this.opts.logger?.warn(`shared host ${slot.nodeset} could not be restarted: ${errorMessage(err)}`);
        this.opts.onLost?.(slot.nodeset, err);
      },
    );
  }
}
