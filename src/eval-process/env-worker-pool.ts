/**
 * EnvWorkerPool: N worker slots, each owning one host per replicated nodeset of the graph
 * (`env_gridnav#0` … `#N-1`; a single untagged host when N = 1). Worker k only ever leases
 * slot k, so every episode a worker takes runs on its own env processes; a slot whose host died is respawned
 * before its next episode.
 */
import { errorMessage, HostError } from '../errors.js';
import { HostClient } from '../host/host-client.js';
import { startHost, type RunHost } from './in-process-host.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';

export interface EnvWorkerPoolOptions {
  /** Worker slots to build (≥ 1). */
  workerCount: number;
  /**
   * The run's worker id of the first slot: a play lane's pool (play-lanes.ts) holds workers
   * `firstWorkerId` … `firstWorkerId + workerCount - 1` of its run. @default 0
   */
  firstWorkerId?: number;
  /** Tag the hosts with their worker id even with one slot: a lane's one worker of a run that has more. @default false */
  tagged?: boolean;
  /** The replicated nodesets the graph uses; each gets one host per slot. */
  nodesets: readonly NodesetEntry[];
  /** Extra environment for the hosts. */
  env?: Record<string, string>;
  /** Aborts host start-up. */
  signal?: AbortSignal;
  /** Receives each host's stderr lines, prefixed with its name. */
  onStderr?: (line: string) => void;
  /** Each host process once it is up, respawns included (not hosts served in-process: they have no process of their own). */
  onHostStarted?: (host: HostInfo) => void;
  /**
   * Boot every slot's hosts at once instead of after `startOthers()`: right where the machine
   * has a core for each host, so start-up costs one host's boot, not two in a row. @default false
   */
  startAllAtOnce?: boolean;
  /**
   * How many of the other slots boot at a time after `startOthers()`. A host's boot is CPU work
   * (a thread or process loading its modules): in lanes no wider than the free cores, each slot
   * is up one boot after the one before it, where booting all at once brings every slot up only
   * after all of them have booted.
   * @default every slot at once
   */
  bootLanes?: number;
}

export interface HostInfo {
  nodeset: string;
  tag: string | null;
  url: string;
  pid: number;
}

export interface WorkerSlot {
  readonly workerId: number;
  /** nodeset name → URL of this worker's own host, handed to the LoopRunner. */
  readonly urlOverrides: Record<string, string>;
  /** nodeset name → a client of this worker's host of it. */
  readonly clients: ReadonlyMap<string, HostClient>;
}

interface SlotState extends WorkerSlot {
  urlOverrides: Record<string, string>;
  clients: Map<string, HostClient>;
  hosts: Map<string, RunHost>;
  /** Settles when the slot's first hosts are up (rejects when one could not start). */
  starting: Promise<void>;
  leased: boolean;
  /** Set after a crash: the slot's hosts are replaced before the next episode even if they still answer. */
  suspect: boolean;
}

export class EnvWorkerPool {
  readonly workerCount: number;
  readonly firstWorkerId: number;
  readonly #opts: EnvWorkerPoolOptions;
  readonly #slots: SlotState[];
  readonly #entries: Map<string, NodesetEntry>;
  #closing: Promise<void> | undefined;
  #openGate!: () => void;
  readonly #othersGate = new Promise<void>((resolve) => (this.#openGate = resolve));

  private constructor(opts: EnvWorkerPoolOptions, slots: SlotState[]) {
    this.workerCount = opts.workerCount;
    this.firstWorkerId = opts.firstWorkerId ?? 0;
    this.#opts = opts;
    this.#slots = slots;
    this.#entries = new Map(opts.nodesets.map((n) => [n.name, n]));
  }

  /**
   * Starts slot 0's hosts and resolves once they are up; the other slots' hosts start together
   * in the background after `startOthers()` (`ready(k)` waits for slot k). On 2 cores, booting
   * every host at once would hold the first episode back until the last host is up. When
   * slot 0 cannot start, whatever started is stopped and the error is thrown. With
   * `startAllAtOnce` every slot boots at once (a machine with a core per host).
   */
  static async open(opts: EnvWorkerPoolOptions): Promise<EnvWorkerPool> {
    if (!Number.isInteger(opts.workerCount) || opts.workerCount < 1)
      throw new RangeError(`worker count must be an integer ≥ 1, got ${opts.workerCount}`);
    const first = opts.firstWorkerId ?? 0;
    const slots: SlotState[] = Array.from({ length: opts.workerCount }, (_, k) => ({
      workerId: first + k,
      urlOverrides: {},
      clients: new Map(),
      hosts: new Map(),
      starting: Promise.resolve(),
      leased: false,
      suspect: false,
    }));
    const pool = new EnvWorkerPool(opts, slots);
    const [head, ...rest] = slots;
    head!.starting = pool.#startSlot(head!);
    const lanes = Math.max(1, Math.min(rest.length, opts.bootLanes ?? rest.length));
    rest.forEach((slot, i) => {
      // Each lane boots its slots one after another, the next one whether or not the last one started.
      const after = i < lanes ? pool.#othersGate : rest[i - lanes]!.starting.catch(() => {});
      slot.starting = after.then(() => pool.#startSlot(slot));
      // Reported by ready(k) to the worker that needs the slot.
      slot.starting.catch(() => {});
    });
    if (opts.startAllAtOnce) pool.#openGate();
    try {
      await head!.starting;
    } catch (err) {
      await pool.close();
      throw err;
    }
    return pool;
  }

  /** Lets the other slots' hosts boot (deferred so checks on slot 0 do not compete with them for the CPU). Idempotent. */
  startOthers(): void {
    this.#openGate();
  }

  /** Waits until slot k's hosts are up; throws when one of them could not start. */
  ready(workerId: number): Promise<void> {
    return this.#slot(workerId).starting;
  }

  /** Waits until every slot is up; throws the first start failure. */
  async allReady(): Promise<void> {
    await Promise.all(this.#slots.map((s) => s.starting));
  }

  /** The tag of worker k's hosts: none when the run has a single worker. */
  tagOf(workerId: number): string | undefined {
    return this.workerCount === 1 && !this.#opts.tagged ? undefined : String(workerId);
  }

  /** Pinned lease: worker k gets slot k, never another. */
  lease(workerId: number): WorkerSlot {
    const slot = this.#slot(workerId);
    if (slot.leased) throw new Error(`worker slot ${workerId} is already leased`);
    slot.leased = true;
    return slot;
  }

  release(workerId: number): void {
    this.#slot(workerId).leased = false;
  }

  /** Marks slot k's hosts for replacement before its next episode (after a crash). */
  markSuspect(workerId: number): void {
    this.#slot(workerId).suspect = true;
  }

  /** Respawns any host of slot k that died (or all of them after a crash). */
  async ensureHealthy(workerId: number, signal?: AbortSignal): Promise<void> {
    const slot = this.#slot(workerId);
    await slot.starting;
    const replace = [...slot.hosts.entries()].filter(([, host]) => slot.suspect || !host.alive);
    slot.suspect = false;
    await Promise.all(
      replace.map(async ([name, host]) => {
        slot.clients.get(name)?.close();
        await host.stop().catch(() => {});
        await this.#spawnInto(slot, this.#entries.get(name)!, signal);
      }),
    );
  }

  /** The host processes (hosts served in-process are left out: their pid is this process's). */
  hosts(): HostInfo[] {
    return this.#slots.flatMap((slot) =>
      [...slot.hosts.values()].filter((h) => !h.inProcess).map((h) => ({ nodeset: h.nodeset, tag: h.tag ?? null, url: h.url, pid: h.pid })),
    );
  }

  /** nodeset → URL of slot k's hosts (in-process ones included). */
  urlsOf(workerId: number): Record<string, string> {
    return { ...this.#slot(workerId).urlOverrides };
  }

  /** Stops every host (SIGTERM, then SIGKILL after a grace). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      // Slots never started stay empty; a host still booting is stopped by #spawnInto as soon as it is up.
      this.#openGate();
      await Promise.allSettled(this.#slots.map((s) => s.starting));
      const stops: Promise<unknown>[] = [];
      for (const slot of this.#slots) {
        for (const client of slot.clients.values()) client.close();
        for (const host of slot.hosts.values()) stops.push(host.stop().catch(() => {}));
      }
      await Promise.all(stops);
    })();
    return this.#closing;
  }

  #slot(workerId: number): SlotState {
    const slot = this.#slots[workerId - this.firstWorkerId];
    if (!slot) throw new RangeError(`no worker slot ${workerId} (pool of ${this.workerCount})`);
    return slot;
  }

  async #startSlot(slot: SlotState): Promise<void> {
    if (this.#closing) return;
    const results = await Promise.allSettled(this.#opts.nodesets.map((entry) => this.#spawnInto(slot, entry)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async #spawnInto(slot: SlotState, entry: NodesetEntry, signal = this.#opts.signal): Promise<void> {
    const tag = this.tagOf(slot.workerId);
    const name = tag === undefined ? entry.name : `${entry.name}#${tag}`;
    let host: RunHost;
    try {
      host = await startHost({
        entry,
        ...(tag !== undefined ? { tag } : {}),
        ...(this.#opts.env ? { env: this.#opts.env } : {}),
        ...(signal ? { signal } : {}),
        onStderr: (line: string) => this.#opts.onStderr?.(`[${name}] ${line}`),
      });
    } catch (err) {
      throw new HostError(`could not start host ${name}: ${errorMessage(err)}`, { cause: err });
    }
    if (this.#closing) {
      await host.stop().catch(() => {});
      return;
    }
    slot.hosts.set(entry.name, host);
    slot.urlOverrides[entry.name] = host.url;
    slot.clients.set(entry.name, new HostClient(host.url));
    if (!host.inProcess) this.#opts.onHostStarted?.({ nodeset: host.nodeset, tag: host.tag ?? null, url: host.url, pid: host.pid });
  }
}
