/**
 * Measures what admission needs: free RAM (always), free VRAM per NVIDIA GPU (read from
 * `nvidia-smi`), and the RSS and VRAM of a process tree (an eval process and its hosts).
 */
import { readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import si from 'systeminformation';
import { queryComputeApps, queryGpus, type GpuMemory } from './nvidia-smi.js';

export type { GpuMemory } from './nvidia-smi.js';

export interface ResourceSample {
  /** null where RAM could not be read (the static ledger applies). */
  ramTotalMb: number | null;
  ramFreeMb: number | null;
  /** null where no NVIDIA GPU could be measured (the static ledger applies). Summed over every GPU. */
  vramTotalMb: number | null;
  vramFreeMb: number | null;
  /** Each GPU measured, in nvidia-smi's order; absent or empty where none was. */
  gpus?: GpuMemory[];
}

/** What the scheduler reads; inject another implementation to fix the readings. */
export interface ResourceSource {
  sample(): Promise<ResourceSample>;
  /** RSS of `pid` and all its descendants, MB; 0 when the process is gone. */
  processTreeRssMb(pid: number): Promise<number>;
  /** The same for several roots at once (one walk of the process table). */
  processTreesRssMb?(pids: number[]): Promise<Map<number, number>>;
  /** GPU memory held by each root and its descendants, MB; null where per-process VRAM cannot be read. */
  processTreesVramMb?(pids: number[]): Promise<Map<number, number> | null>;
  /**
   * CPU time used so far by each root and its descendants (children it reaped included),
   * seconds; null where it cannot be read. Admission calibrates a graph's cores from its rate.
   */
  processTreesCpuSec?(pids: number[]): Promise<Map<number, number> | null>;
  /** Stops any query in flight. Idempotent. */
  close?(): void;
}

export interface ResourceSamplerOptions {
  /** How often VRAM is re-read; in between the last reading is served. @default 2000 */
  vramRefreshMs?: number;
  /** The nvidia-smi executable. @default 'nvidia-smi' (found on PATH) */
  nvidiaSmi?: string;
  /** An nvidia-smi answer later than this counts as none. @default 5000 */
  nvidiaSmiTimeoutMs?: number;
}

const MB = 1024 * 1024;
/** A process table this recent is reused (the RSS and VRAM readings of one sample are ms apart; samples are 1 s apart). */
const TABLE_REUSE_MS = 500;

/**
 * RAM from `si.mem()` (MemAvailable on Linux). VRAM from an asynchronous `nvidia-smi` query,
 * refreshed in the background (a sample never waits for it after the first); where nvidia-smi
 * gives nothing, systeminformation's controller list is read once as a fallback (it needs
 * `lspci`, and runs nvidia-smi synchronously, so it is not polled). A failed refresh keeps the
 * last reading: a slow nvidia-smi under load must not switch admission to the static ledger.
 */
export class ResourceSampler implements ResourceSource {
  private readonly vramRefreshMs: number;
  private readonly smi: { command?: string; timeoutMs: number; signal: AbortSignal };
  private readonly abort = new AbortController();
  private firstReading: Promise<void> | null = null;
  private gpus: GpuMemory[] | null = null;
  private vramSource: 'nvidia-smi' | 'systeminformation' | null = null;
  private vramReadAt = 0;
  private vramReading: Promise<void> | null = null;

  constructor(opts: ResourceSamplerOptions = {}) {
    this.vramRefreshMs = opts.vramRefreshMs ?? 2000;
    this.smi = {
      ...(opts.nvidiaSmi !== undefined ? { command: opts.nvidiaSmi } : {}),
      timeoutMs: opts.nvidiaSmiTimeoutMs ?? 5000,
      signal: this.abort.signal,
    };
  }

  /** True when an NVIDIA GPU with readable memory is present (after the first reading). */
  async hasNvidiaGpu(): Promise<boolean> {
    await this.readFirst();
    return this.gpus !== null;
  }

  async sample(): Promise<ResourceSample> {
    let ramTotalMb: number | null = null;
    let ramFreeMb: number | null = null;
    try {
      const m = await si.mem();
      ramTotalMb = m.total / MB;
      ramFreeMb = (m.available || m.free) / MB;
    } catch {
      // unmeasurable: the ledger takes over
    }
    await this.readFirst();
    if (Date.now() - this.vramReadAt >= this.vramRefreshMs && !this.vramReading && !this.abort.signal.aborted) {
      // Retried even where no GPU was found: a driver may come up after the server.
      this.vramReading = queryGpus(this.smi)
        .then((gpus) => {
          if (gpus) this.setGpus(gpus, 'nvidia-smi');
        })
        .finally(() => {
          this.vramReadAt = Date.now();
          this.vramReading = null;
        });
    }
    const gpus = this.gpus;
    return {
      ramTotalMb,
      ramFreeMb,
      vramTotalMb: gpus ? gpus.reduce((s, g) => s + g.totalMb, 0) : null,
      vramFreeMb: gpus ? gpus.reduce((s, g) => s + g.freeMb, 0) : null,
      gpus: gpus ? gpus.map((g) => ({ ...g })) : [],
    };
  }

  async processTreeRssMb(pid: number): Promise<number> {
    return (await this.processTreesRssMb([pid])).get(pid) ?? 0;
  }

  processTreesRssMb(pids: number[]): Promise<Map<number, number>> {
    return processTreesRssMb(pids, this.recentTable());
  }

  #table: { at: number; table: Promise<ProcessTable> } | null = null;
  /** One process-table walk serves the RSS and the VRAM reading of the same sample. */
  private recentTable(): Promise<ProcessTable> {
    const now = performance.now();
    if (!this.#table || now - this.#table.at > TABLE_REUSE_MS) this.#table = { at: now, table: processTable() };
    return this.#table.table;
  }

  /** From nvidia-smi's compute processes; null unless nvidia-smi answers. */
  async processTreesVramMb(pids: number[]): Promise<Map<number, number> | null> {
    await this.readFirst();
    if (this.vramSource !== 'nvidia-smi' || pids.length === 0) return null;
    const used = await queryComputeApps(this.smi);
    return used === null ? null : processTreesVramMb(pids, used, () => this.recentTable());
  }

  async processTreesCpuSec(pids: number[]): Promise<Map<number, number> | null> {
    const table = await this.recentTable();
    if (!table.cpuSec) return null;
    const cpu = table.cpuSec;
    const out = new Map<number, number>();
    for (const [root, members] of treeMembers(table, pids))
      out.set(
        root,
        members.reduce((s, p) => s + (cpu.get(p) ?? 0), 0),
      );
    return out;
  }

  close(): void {
    this.abort.abort();
  }

  private readFirst(): Promise<void> {
    this.firstReading ??= (async () => {
      const gpus = await queryGpus(this.smi);
      if (gpus) this.setGpus(gpus, 'nvidia-smi');
      else if (!this.abort.signal.aborted) {
        const fallback = await systeminformationGpus();
        if (fallback) this.setGpus(fallback, 'systeminformation');
      }
      this.vramReadAt = Date.now();
    })();
    return this.firstReading;
  }

  private setGpus(gpus: GpuMemory[], source: 'nvidia-smi' | 'systeminformation'): void {
    this.gpus = gpus;
    this.vramSource = source;
  }
}

/** NVIDIA controllers with a memory figure, from systeminformation (filled only where lspci runs). */
async function systeminformationGpus(): Promise<GpuMemory[] | null> {
  try {
    const g = await si.graphics();
    const nv = g.controllers.filter((c) => (/nvidia/i.test(c.vendor ?? '') || /nvidia/i.test(c.name ?? '')) && (c.memoryTotal ?? 0) > 0);
    if (nv.length === 0) return null;
    return nv.map((c, index) => {
      const totalMb = c.memoryTotal ?? 0;
      const freeMb = c.memoryFree ?? Math.max(0, totalMb - (c.memoryUsed ?? 0));
      return { index, uuid: '', name: c.name ?? c.model ?? 'NVIDIA GPU', totalMb, usedMb: c.memoryUsed ?? totalMb - freeMb, freeMb };
    });
  } catch {
    return null;
  }
}

/**
 * RSS of each root and all its descendants, MB. On Linux it reads /proc directly: the parent of
 * every process from /proc/<pid>/stat, then VmRSS from /proc/<pid>/status for the tree members
 * only (far cheaper than `si.processes()`); elsewhere it falls back to `si.processes()`.
 */
export async function processTreesRssMb(roots: number[], walked?: Promise<ProcessTable>): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (roots.length === 0) return out;
  const table = await (walked ?? processTable());
  for (const [root, members] of treeMembers(table, roots)) {
    const kbs = await Promise.all(members.map((p) => table.rssKb(p)));
    out.set(root, kbs.reduce((s, k) => s + k, 0) / 1024);
  }
  return out;
}

/** GPU memory of each root and all its descendants, MB, given what each process holds (`usedMb` by pid). */
export async function processTreesVramMb(
  roots: number[],
  usedMb: ReadonlyMap<number, number>,
  walk: () => Promise<ProcessTable> = processTable,
): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (roots.length === 0) return out;
  // Nothing on the GPU: every tree holds 0, no need to walk the process table.
  const table = usedMb.size > 0 ? await walk() : { parent: new Map<number, number>(), rssKb: async () => 0 };
  for (const [root, members] of treeMembers(table, roots))
    out.set(
      root,
      members.reduce((s, p) => s + (usedMb.get(p) ?? 0), 0),
    );
  return out;
}

function processTable(): Promise<ProcessTable> {
  return existsSync('/proc/self/stat') ? procTable() : siTable();
}

/** Each root with itself and its descendants; a root not in the table has none. */
function treeMembers(table: ProcessTable, roots: number[]): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of table.parent) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const out = new Map<number, number[]>();
  for (const root of roots) {
    if (!table.parent.has(root)) {
      out.set(root, []);
      continue;
    }
    const members: number[] = [];
    const stack = [root];
    const seen = new Set<number>();
    while (stack.length > 0) {
      const p = stack.pop()!;
      if (seen.has(p)) continue;
      seen.add(p);
      members.push(p);
      for (const c of children.get(p) ?? []) stack.push(c);
    }
    out.set(root, members);
  }
  return out;
}

interface ProcessTable {
  parent: Map<number, number>;
  rssKb(pid: number): Promise<number>;
  /** CPU seconds of each process (user + system, its reaped children's included); absent where not read. */
  cpuSec?: Map<number, number>;
}

/** Linux's USER_HZ: /proc reports CPU times in these ticks (100 on every mainstream kernel build). */
const CLOCK_TICKS_PER_SEC = 100;

async function procTable(): Promise<ProcessTable> {
  const parent = new Map<number, number>();
  const cpuSec = new Map<number, number>();
  const names = await readdir('/proc');
  await Promise.all(
    names.map(async (name) => {
      if (!/^\d+$/.test(name)) return;
      try {
        const stat = await readFile(`/proc/${name}/stat`, 'utf8');
        // The command name may hold spaces or parentheses: fields resume after the last ')'.
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const ppid = Number(rest[1]);
        if (Number.isFinite(ppid)) parent.set(Number(name), ppid);
        // utime, stime, cutime, cstime: fields 14-17 of the stat line.
        const ticks = Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14]);
        if (Number.isFinite(ticks)) cpuSec.set(Number(name), ticks / CLOCK_TICKS_PER_SEC);
      } catch {
        // exited meanwhile
      }
    }),
  );
  return {
    parent,
    cpuSec,
    async rssKb(pid) {
      try {
        const status = await readFile(`/proc/${pid}/status`, 'utf8');
        const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
        return m ? Number(m[1]) : 0;
      } catch {
        return 0;
      }
    },
  };
}

async function siTable(): Promise<ProcessTable> {
  const list = await si.processes();
  const parent = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const p of list.list) {
    parent.set(p.pid, p.parentPid);
    rss.set(p.pid, p.memRss);
  }
  return { parent, rssKb: async (pid) => rss.get(pid) ?? 0 };
}

/** True while a process with this pid exists (and may be signalled by us). */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The command line of a live process, or null (Linux /proc; null elsewhere). */
export async function processCommandLine(pid: number): Promise<string[] | null> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    return raw.split('\0').filter((s) => s.length > 0);
  } catch {
    return null;
  }
}
