/**
 * Measures what admission needs: free RAM (always), free VRAM (where an NVIDIA GPU is
 * present), and the RSS of a process tree (an eval process and its hosts).
 */
import { readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import si from 'systeminformation';
import { execa } from 'execa';

export interface ResourceSample {
  /** null where RAM could not be read (the static ledger applies). */
  ramTotalMb: number | null;
  ramFreeMb: number | null;
  /** null where no NVIDIA GPU could be measured (the static ledger applies). */
  vramTotalMb: number | null;
  vramFreeMb: number | null;
}

/** What the scheduler reads; inject another implementation to fix the readings. */
export interface ResourceSource {
  sample(): Promise<ResourceSample>;
  /** RSS of `pid` and all its descendants, MB; 0 when the process is gone. */
  processTreeRssMb(pid: number): Promise<number>;
  /** The same for several roots at once (one walk of the process table). */
  processTreesRssMb?(pids: number[]): Promise<Map<number, number>>;
}

export interface ResourceSamplerOptions {
  /** How often VRAM is re-read; in between the last reading is served. @default 2000 */
  vramRefreshMs?: number;
}

const MB = 1024 * 1024;

/**
 * RAM from `si.mem()` (MemAvailable on Linux). The GPU probe runs `si.graphics()` once and is
 * cached; later VRAM readings come from an asynchronous `nvidia-smi` query refreshed in the
 * background, because `si.graphics()` runs nvidia-smi synchronously and would stall the event loop.
 */
export class ResourceSampler implements ResourceSource {
  private readonly vramRefreshMs: number;
  private gpuProbe: Promise<boolean> | null = null;
  private vram: { totalMb: number; freeMb: number } | null = null;
  private vramReadAt = 0;
  private vramReading: Promise<void> | null = null;

  constructor(opts: ResourceSamplerOptions = {}) {
    this.vramRefreshMs = opts.vramRefreshMs ?? 2000;
  }

  /** True when an NVIDIA GPU with readable memory is present (probed once). */
  hasNvidiaGpu(): Promise<boolean> {
    this.gpuProbe ??= probeNvidia().then((reading) => {
      if (reading) {
        this.vram = reading;
        this.vramReadAt = Date.now();
      }
      return reading !== null;
    });
    return this.gpuProbe;
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
    if (await this.hasNvidiaGpu()) {
      if (Date.now() - this.vramReadAt >= this.vramRefreshMs && !this.vramReading) {
        this.vramReading = readNvidiaSmi()
          .then((r) => {
            if (r) this.vram = r;
          })
          .finally(() => {
            this.vramReadAt = Date.now();
            this.vramReading = null;
          });
      }
    }
    return { ramTotalMb, ramFreeMb, vramTotalMb: this.vram?.totalMb ?? null, vramFreeMb: this.vram?.freeMb ?? null };
  }

  async processTreeRssMb(pid: number): Promise<number> {
    return (await this.processTreesRssMb([pid])).get(pid) ?? 0;
  }

  processTreesRssMb(pids: number[]): Promise<Map<number, number>> {
    return processTreesRssMb(pids);
  }
}

async function probeNvidia(): Promise<{ totalMb: number; freeMb: number } | null> {
  try {
    const g = await si.graphics();
    const nv = g.controllers.filter((c) => /nvidia/i.test(c.vendor ?? '') || /nvidia/i.test(c.name ?? ''));
    const total = nv.reduce((s, c) => s + (c.memoryTotal ?? 0), 0);
    if (nv.length === 0 || total <= 0) return null;
    return { totalMb: total, freeMb: nv.reduce((s, c) => s + (c.memoryFree ?? 0), 0) };
  } catch {
    return null;
  }
}

/** Sums every GPU's memory; nvidia-smi reports MiB. */
async function readNvidiaSmi(): Promise<{ totalMb: number; freeMb: number } | null> {
  const r = await execa('nvidia-smi', ['--query-gpu=memory.total,memory.free', '--format=csv,noheader,nounits'], {
    reject: false,
    timeout: 5000,
  });
  if (r.exitCode !== 0 || typeof r.stdout !== 'string') return null;
  let totalMb = 0;
  let freeMb = 0;
  for (const line of r.stdout.split('\n')) {
    const [t, f] = line.split(',').map((x) => Number(x.trim()));
    if (t === undefined || f === undefined || !Number.isFinite(t) || !Number.isFinite(f)) continue;
    totalMb += t;
    freeMb += f;
  }
  return totalMb > 0 ? { totalMb, freeMb } : null;
}

/**
 * RSS of each root and all its descendants, MB. On Linux it reads /proc directly: the parent of
 * every process from /proc/<pid>/stat, then VmRSS from /proc/<pid>/status for the tree members
 * only (far cheaper than `si.processes()`); elsewhere it falls back to `si.processes()`.
 */
export async function processTreesRssMb(roots: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (roots.length === 0) return out;
  const table = existsSync('/proc/self/stat') ? await procTable() : await siTable();
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of table.parent) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  for (const root of roots) {
    if (!table.parent.has(root)) {
      out.set(root, 0);
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
    const kbs = await Promise.all(members.map((p) => table.rssKb(p)));
    out.set(root, kbs.reduce((s, k) => s + k, 0) / 1024);
  }
  return out;
}

interface ProcessTable {
  parent: Map<number, number>;
  rssKb(pid: number): Promise<number>;
}

async function procTable(): Promise<ProcessTable> {
  const parent = new Map<number, number>();
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
      } catch {
        // exited meanwhile
      }
    }),
  );
  return {
    parent,
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
