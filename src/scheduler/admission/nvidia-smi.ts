/**
 * GPU memory straight from `nvidia-smi`: total/used/free per GPU and the memory each compute
 * process holds. Containers usually lack `lspci`, which systeminformation needs before it
 * reports any GPU memory, while the NVIDIA container runtime does mount `nvidia-smi`.
 */
import { execa } from 'execa';

/** One GPU as nvidia-smi reports it; MiB, which the scheduler counts as MB. */
export interface GpuMemory {
  index: number;
  uuid: string;
  name: string;
  totalMb: number;
  usedMb: number;
  freeMb: number;
}

export interface NvidiaSmiOptions {
  /** The executable. @default 'nvidia-smi' (found on PATH) */
  command?: string;
  /** An answer later than this counts as none (the process is killed). @default 5000 */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export const GPU_QUERY = ['--query-gpu=index,uuid,name,memory.total,memory.used,memory.free', '--format=csv,noheader,nounits'];
export const COMPUTE_APPS_QUERY = ['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits'];

/** Every GPU with readable memory; null when nvidia-smi is missing, fails, times out or lists none. */
export async function queryGpus(opts: NvidiaSmiOptions = {}): Promise<GpuMemory[] | null> {
  const out = await runNvidiaSmi(GPU_QUERY, opts);
  if (out === null) return null;
  const gpus = parseGpuCsv(out);
  return gpus.length > 0 ? gpus : null;
}

/** MB held per compute process (summed over GPUs); null when nvidia-smi cannot answer. */
export async function queryComputeApps(opts: NvidiaSmiOptions = {}): Promise<Map<number, number> | null> {
  const out = await runNvidiaSmi(COMPUTE_APPS_QUERY, opts);
  return out === null ? null : parseComputeAppsCsv(out);
}

/** `index, uuid, name, total, used, free` lines; a GPU whose memory reads `[N/A]` is left out. */
export function parseGpuCsv(text: string): GpuMemory[] {
  const gpus: GpuMemory[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(',').map((x) => x.trim());
    if (f.length < 6) continue;
    // The name is everything between the uuid and the three figures, should it hold a comma.
    const [total = null, used = null, free = null] = f.slice(-3).map(toMb);
    const index = Number(f[0]);
    if (!Number.isInteger(index) || total === null || free === null || total <= 0) continue;
    gpus.push({ index, uuid: f[1]!, name: f.slice(2, -3).join(', '), totalMb: total, usedMb: used ?? total - free, freeMb: free });
  }
  return gpus;
}

/** `pid, used_memory` lines; a process on several GPUs is summed, `[N/A]` figures are skipped. */
export function parseComputeAppsCsv(text: string): Map<number, number> {
  const used = new Map<number, number>();
  for (const line of text.split('\n')) {
    const [p, m] = line.split(',').map((x) => x.trim());
    const pid = Number(p);
    const mb = toMb(m);
    if (!Number.isInteger(pid) || pid <= 0 || mb === null) continue;
    used.set(pid, (used.get(pid) ?? 0) + mb);
  }
  return used;
}

function toMb(field: string | undefined): number | null {
  if (field === undefined || field === '') return null;
  const v = Number(field);
  return Number.isFinite(v) && v >= 0 ? v : null;
}

/**
 * Stdout of a successful run, else null. The deadline does not wait for the process to exit: a
 * driver hang can leave nvidia-smi unkillable, and admission must not wait on it.
 */
async function runNvidiaSmi(args: string[], opts: NvidiaSmiOptions): Promise<string | null> {
  if (opts.signal?.aborted) return null;
  const timeoutMs = opts.timeoutMs ?? 5000;
  const child = execa(opts.command ?? 'nvidia-smi', args, {
    reject: false,
    timeout: timeoutMs,
    stdin: 'ignore',
    stderr: 'ignore',
    ...(opts.signal ? { cancelSignal: opts.signal } : {}),
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs + 500);
    timer.unref();
  });
  try {
    const r = await Promise.race([child, late]);
    if (r === null || r.exitCode !== 0 || typeof r.stdout !== 'string') return null;
    return r.stdout;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}
