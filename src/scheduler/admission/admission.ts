/**
 * One admission pass over the queue: which jobs start now, and why each other one waits.
 * Pure arithmetic over a resource sample, so a tick with a thousand queued jobs stays cheap.
 */
import type { ResourceEstimate } from '../types.js';

export interface AdmissionCandidate {
  runId: string;
  priority: number;
  estimate: ResourceEstimate;
  exclusiveGpu: boolean;
  /** When admission first passed it over (ms since epoch), or null. */
  skippedSinceMs: number | null;
}

export interface RunningReservation {
  runId: string;
  reservation: ResourceEstimate;
  exclusiveGpu: boolean;
  /** Latest process-tree RSS, MB (null until sampled, or for in-process runs). */
  rssMb: number | null;
  /** Latest process-tree GPU memory, MB (null where per-process VRAM is not measured). */
  vramMb?: number | null;
}

export interface Capacity {
  /** Measured free, MB; null where it cannot be measured. */
  ramFreeMb: number | null;
  vramFreeMb: number | null;
  /** Measured totals (for refusing to reserve the impossible). */
  ramTotalMb: number | null;
  vramTotalMb: number | null;
  /** The static ledger's capacity where a resource is not measured; absent: not a constraint. */
  staticRamMb?: number | undefined;
  staticVramMb?: number | undefined;
  /** CPU cores of the machine, shared out by the runs' core estimates; absent: not a constraint. */
  cores?: number | undefined;
}

export interface AdmissionInput {
  /** In admission order: priority desc, then FIFO. */
  queue: readonly AdmissionCandidate[];
  running: readonly RunningReservation[];
  capacity: Capacity;
  /** Holder of the interactive lock, or null. */
  lockHolder: string | null;
  now: number;
  starvationMs: number;
}

export interface Verdict {
  waitingReason: string;
  reserving: boolean;
}

export interface AdmissionResult {
  /** Run ids to start, in order. */
  admit: string[];
  /** For every job not admitted. */
  waiting: Map<string, Verdict>;
  /** What admission saw: free after the running jobs' reservations (before this pass's admissions). */
  ramAvailableMb: number;
  vramAvailableMb: number;
  reservedRamMb: number;
  reservedVramMb: number;
  /** Cores not reserved by running jobs (Infinity where cores are not counted), and those reserved. */
  coresAvailable: number;
  reservedCores: number;
}

/** Cores in words: whole numbers bare, else one decimal. */
export function formatCores(c: number): string {
  const v = Math.max(0, Math.round(c * 10) / 10);
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${v === 1 ? 'core' : 'cores'}`;
}

/**
 * The cores a job holds while it runs: its estimate, but never more than the machine has, so a
 * run wider than the machine starts alone (slower, oversubscribed) instead of never.
 */
export function coresHeld(est: ResourceEstimate, total: number | undefined): number {
  const c = est.cores ?? 0;
  return total === undefined ? c : Math.min(c, total);
}

export function formatMb(mb: number): string {
  if (!Number.isFinite(mb)) return 'unlimited';
  const v = Math.max(0, mb);
  return v >= 1024 ? `${(v / 1024).toFixed(1)} GB` : `${Math.round(v)} MB`;
}

/** Why every queued job waits while the interactive lock is held. */
export const lockedReason = (holder: string): string => `interactive session '${holder}' holds the lock`;

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

interface Pool {
  name: 'RAM' | 'VRAM';
  available: number;
  /** How the figure was obtained, for the reason text. */
  source: 'measured' | 'ledger' | 'none';
  total: number;
}

export function planAdmission(input: AdmissionInput): AdmissionResult {
  const { capacity: cap, running, queue, now } = input;
  let reservedRam = 0;
  let reservedVram = 0;
  let outstandingRam = 0;
  let outstandingVram = 0;
  let reservedCores = 0;
  for (const r of running) {
    reservedCores += coresHeld(r.reservation, cap.cores);
    reservedRam += r.reservation.ramMb;
    reservedVram += r.reservation.vramMb;
    // Measured free memory already lacks what a job uses now; only the rest of its reservation is still to come.
    outstandingRam += Math.max(0, r.reservation.ramMb - (r.rssMb ?? 0));
    outstandingVram += Math.max(0, r.reservation.vramMb - (r.vramMb ?? 0));
  }
  const ram: Pool =
    cap.ramFreeMb !== null
      ? { name: 'RAM', available: cap.ramFreeMb - outstandingRam, source: 'measured', total: cap.ramTotalMb ?? Infinity }
      : cap.staticRamMb !== undefined
        ? { name: 'RAM', available: cap.staticRamMb - reservedRam, source: 'ledger', total: cap.staticRamMb }
        : { name: 'RAM', available: Infinity, source: 'none', total: Infinity };
  // Where nvidia-smi does not attribute GPU memory to a job's processes, its whole VRAM reservation is held back.
  const vram: Pool =
    cap.vramFreeMb !== null
      ? { name: 'VRAM', available: cap.vramFreeMb - outstandingVram, source: 'measured', total: cap.vramTotalMb ?? Infinity }
      : cap.staticVramMb !== undefined
        ? { name: 'VRAM', available: cap.staticVramMb - reservedVram, source: 'ledger', total: cap.staticVramMb }
        : { name: 'VRAM', available: Infinity, source: 'none', total: Infinity };
  const result: AdmissionResult = {
    admit: [],
    waiting: new Map(),
    ramAvailableMb: ram.available,
    vramAvailableMb: vram.available,
    reservedRamMb: reservedRam,
    reservedVramMb: reservedVram,
    coresAvailable: cap.cores === undefined ? Infinity : cap.cores - reservedCores,
    reservedCores,
  };
  // CPU is a ledger: the machine's cores less the running jobs' estimates (a busy core cannot be measured as "free" ahead of time).
  const cores: CorePool = { available: result.coresAvailable, total: cap.cores };

  if (input.lockHolder !== null) {
    const reason = lockedReason(input.lockHolder);
    for (const job of queue) result.waiting.set(job.runId, { waitingReason: reason, reserving: false });
    return result;
  }

  let exclusiveRunning = running.find((r) => r.exclusiveGpu)?.runId ?? null;
  let runningCount = running.length;
  // Reservations of starving jobs ahead in the queue, which later jobs may not eat into.
  let heldRam = 0;
  let heldVram = 0;
  let heldCores = 0;
  const holders: AdmissionCandidate[] = [];
  let exclusiveHolder: string | null = null;

  for (const job of queue) {
    const starving = job.skippedSinceMs !== null && now - job.skippedSinceMs >= input.starvationMs;
    const wait = (reason: string, canReserve: boolean): void => {
      const reserving = starving && canReserve;
      if (reserving) {
        heldRam += job.estimate.ramMb;
        heldVram += job.estimate.vramMb;
        heldCores += coresHeld(job.estimate, cores.total);
        holders.push(job);
        if (job.exclusiveGpu) exclusiveHolder ??= job.runId;
      }
      result.waiting.set(job.runId, { waitingReason: reason, reserving });
    };

    if (exclusiveRunning !== null) {
      wait(`exclusive GPU run ${exclusiveRunning} is running`, true);
      continue;
    }
    if (exclusiveHolder !== null) {
      wait(`behind exclusive GPU run ${exclusiveHolder}, which has waited long enough to hold the GPU`, false);
      continue;
    }
    const tooBig = exceedsTotal(job.estimate, ram, vram);
    if (tooBig) {
      wait(tooBig, false);
      continue;
    }
    const lacking = shortfall(job.estimate, ram, vram, heldRam, heldVram) ?? coreShortfall(job.estimate, cores, heldCores);
    if (lacking) {
      const withoutHeld = shortfall(job.estimate, ram, vram, 0, 0) ?? coreShortfall(job.estimate, cores, 0);
      if (!withoutHeld && holders.length > 0) {
        const higher = holders.every((h) => h.priority > job.priority);
        wait(
          `behind ${plural(holders.length, higher ? 'higher-priority job' : 'earlier job')} holding their reservation (${lacking})`,
          true,
        );
      } else {
        wait(lacking, true);
      }
      continue;
    }
    if (job.exclusiveGpu && runningCount > 0) {
      wait(`needs the GPU to itself; ${plural(runningCount, 'run')} still running`, true);
      continue;
    }
    result.admit.push(job.runId);
    ram.available -= job.estimate.ramMb;
    vram.available -= job.estimate.vramMb;
    cores.available -= coresHeld(job.estimate, cores.total);
    runningCount++;
    if (job.exclusiveGpu) exclusiveRunning = job.runId;
  }
  return result;
}

interface CorePool {
  available: number;
  total: number | undefined;
}

/** "needs 6 cores, 2 free"; null when the job's cores fit. */
function coreShortfall(est: ResourceEstimate, cores: CorePool, held: number): string | null {
  const need = coresHeld(est, cores.total);
  // A hair of slack: estimates are tenths, and 0.1 + 0.2 must fit in 0.3.
  if (need <= cores.available - held + 1e-9) return null;
  const free = formatCores(cores.available - held).replace(/ cores?$/, '');
  if ((est.cores ?? 0) > need)
    return `needs all ${formatCores(need)} of this machine (estimated ${formatCores(est.cores ?? 0)}), ${free} free`;
  return `needs ${formatCores(need)}, ${free} free`;
}

function freeLabel(pool: Pool, held: number): string {
  const where = pool.source === 'ledger' ? 'free in the static ledger' : 'free after reservations';
  return `${formatMb(pool.available - held)} ${where}`;
}

/** What is missing, in words; null when the job fits. */
function shortfall(est: ResourceEstimate, ram: Pool, vram: Pool, heldRam: number, heldVram: number): string | null {
  if (est.ramMb > ram.available - heldRam) return `needs ${formatMb(est.ramMb)} RAM, ${freeLabel(ram, heldRam)}`;
  if (est.vramMb > vram.available - heldVram) return `needs ${formatMb(est.vramMb)} VRAM, ${freeLabel(vram, heldVram)}`;
  return null;
}

/** A job larger than the whole machine never reserves (it would block everything behind it forever). */
function exceedsTotal(est: ResourceEstimate, ram: Pool, vram: Pool): string | null {
  if (est.ramMb > ram.total) return `needs ${formatMb(est.ramMb)} RAM, more than the ${formatMb(ram.total)} this machine has`;
  if (est.vramMb > vram.total) return `needs ${formatMb(est.vramMb)} VRAM, more than the ${formatMb(vram.total)} this machine has`;
  return null;
}
