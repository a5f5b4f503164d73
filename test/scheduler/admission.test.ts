/** Admission arithmetic on its own: what fits, what reserves, and the reason each job waits. */
import { describe, expect, it } from 'vitest';
import {
  formatMb,
  planAdmission,
  type AdmissionCandidate,
  type AdmissionInput,
  type RunningReservation,
} from '../../src/scheduler/admission/admission.js';

const job = (runId: string, ramMb: number, extra: Partial<AdmissionCandidate> = {}): AdmissionCandidate => ({
  runId,
  priority: 0,
  estimate: { ramMb, vramMb: 0, source: 'declared' },
  exclusiveGpu: false,
  skippedSinceMs: null,
  ...extra,
});
const running = (runId: string, ramMb: number, extra: Partial<RunningReservation> = {}): RunningReservation => ({
  runId,
  reservation: { ramMb, vramMb: 0, source: 'declared' },
  exclusiveGpu: false,
  rssMb: null,
  ...extra,
});
const plan = (over: Partial<AdmissionInput>) =>
  planAdmission({
    queue: [],
    running: [],
    capacity: { ramFreeMb: 1000, vramFreeMb: null, ramTotalMb: 8000, vramTotalMb: null },
    lockHolder: null,
    now: 100_000,
    starvationMs: 60_000,
    ...over,
  });

describe('planAdmission', () => {
  it('admits in queue order while room lasts and skips what does not fit', () => {
    const r = plan({ queue: [job('a', 600), job('b', 600), job('c', 300)] });
    expect(r.admit).toEqual(['a', 'c']);
    expect(r.waiting.get('b')).toEqual({ waitingReason: 'needs 600 MB RAM, 400 MB free after reservations', reserving: false });
  });

  it('counts only the part of a running reservation its processes do not use yet', () => {
    // 1000 free measured; the running job reserved 800 and already uses 500 of it (gone from "free").
    const r = plan({ queue: [job('a', 750)], running: [running('x', 800, { rssMb: 500 })] });
    expect(r.admit).toEqual([]);
    expect(r.waiting.get('a')?.waitingReason).toBe('needs 750 MB RAM, 700 MB free after reservations');
    expect(r.reservedRamMb).toBe(800);
    expect(plan({ queue: [job('a', 750)], running: [running('x', 800, { rssMb: 800 })] }).admit).toEqual(['a']);
  });

  it('uses the static ledger where a resource is not measured', () => {
    const capacity = { ramFreeMb: null, vramFreeMb: null, ramTotalMb: null, vramTotalMb: null, staticRamMb: 2048, staticVramMb: 1000 };
    const vjob = (id: string) => ({ ...job(id, 10), estimate: { ramMb: 10, vramMb: 600, source: 'marginal' as const } });
    const r = plan({
      capacity,
      queue: [vjob('a')],
      running: [{ ...running('x', 1500), reservation: { ramMb: 1500, vramMb: 600, source: 'declared' } }],
    });
    expect(r.waiting.get('a')?.waitingReason).toBe('needs 600 MB VRAM, 400 MB free in the static ledger');
    expect(plan({ capacity, queue: [job('b', 600)], running: [running('x', 1500)] }).waiting.get('b')?.waitingReason).toBe(
      'needs 600 MB RAM, 548 MB free in the static ledger',
    );
  });

  it('treats an unmeasured resource without a ledger as no constraint', () => {
    const r = plan({ queue: [{ ...job('a', 10), estimate: { ramMb: 10, vramMb: 50_000, source: 'marginal' } }] });
    expect(r.admit).toEqual(['a']);
  });

  it('lets a starving job hold its reservation against jobs behind it', () => {
    const starving = job('big', 900, { skippedSinceMs: 0, priority: 3 });
    const r = plan({ queue: [starving, job('small', 200)], running: [running('x', 300)] });
    expect(r.admit).toEqual([]);
    expect(r.waiting.get('big')).toEqual({ waitingReason: 'needs 900 MB RAM, 700 MB free after reservations', reserving: true });
    expect(r.waiting.get('small')?.waitingReason).toBe(
      'behind 1 higher-priority job holding their reservation (needs 200 MB RAM, 0 MB free after reservations)',
    );
    // Before starvationMs it does not reserve: the small job goes first.
    expect(plan({ queue: [job('big', 900, { skippedSinceMs: 90_000 }), job('small', 200)], running: [running('x', 300)] }).admit).toEqual([
      'small',
    ]);
  });

  it('never lets a job larger than the machine reserve', () => {
    const r = plan({ queue: [job('huge', 9000, { skippedSinceMs: 0 }), job('small', 200)] });
    expect(r.admit).toEqual(['small']);
    expect(r.waiting.get('huge')).toEqual({ waitingReason: 'needs 8.8 GB RAM, more than the 7.8 GB this machine has', reserving: false });
  });

  it('runs an exclusive job alone, both ways', () => {
    const a = plan({ queue: [job('b', 10)], running: [running('ex', 10, { exclusiveGpu: true })] });
    expect(a.waiting.get('b')?.waitingReason).toBe('exclusive GPU run ex is running');
    const b = plan({ queue: [job('ex', 10, { exclusiveGpu: true }), job('c', 10)], running: [running('x', 10), running('y', 10)] });
    expect(b.admit).toEqual(['c']);
    expect(b.waiting.get('ex')?.waitingReason).toBe('needs the GPU to itself; 2 runs still running');
    const c = plan({ queue: [job('ex', 10, { exclusiveGpu: true }), job('c', 10)] });
    expect(c.admit).toEqual(['ex']);
    expect(c.waiting.get('c')?.waitingReason).toBe('exclusive GPU run ex is running');
    const d = plan({ queue: [job('ex', 10, { exclusiveGpu: true, skippedSinceMs: 0 }), job('c', 10)], running: [running('x', 10)] });
    expect(d.admit).toEqual([]);
    expect(d.waiting.get('c')?.waitingReason).toBe('behind exclusive GPU run ex, which has waited long enough to hold the GPU');
  });

  it('counts only the part of a running VRAM reservation its processes do not hold yet, where nvidia-smi attributes it', () => {
    const vjob = { ...job('a', 10), estimate: { ramMb: 10, vramMb: 40_000, source: 'marginal' as const } };
    const gpuRun = (vramMb: number | null) => ({
      ...running('x', 10),
      reservation: { ramMb: 10, vramMb: 60_000, source: 'marginal' as const },
      vramMb,
    });
    const capacity = { ramFreeMb: 1000, ramTotalMb: 8000, vramFreeMb: 80_000, vramTotalMb: 143_771 };
    // Nothing attributed yet: the whole 60 GB is still to come out of the 80 GB measured free.
    const before = plan({ capacity, queue: [vjob], running: [gpuRun(null)] });
    expect(before.waiting.get('a')?.waitingReason).toBe('needs 39.1 GB VRAM, 19.5 GB free after reservations');
    // It already holds 50 GB (gone from the measured free): only 10 GB of it is still to come.
    const after = plan({ capacity: { ...capacity, vramFreeMb: 80_000 - 50_000 + 30_000 }, queue: [vjob], running: [gpuRun(50_000)] });
    expect(after.admit).toEqual(['a']);
  });

  it('admits nothing while the interactive lock is held', () => {
    const r = plan({ queue: [job('a', 10), job('b', 10)], lockHolder: 'play' });
    expect(r.admit).toEqual([]);
    expect([...r.waiting.values()].map((v) => v.waitingReason)).toEqual([
      "interactive session 'play' holds the lock",
      "interactive session 'play' holds the lock",
    ]);
  });

  it('shares out CPU cores as a ledger and says what is missing', () => {
    const cjob = (id: string, cores: number) => ({
      ...job(id, 10),
      estimate: { ramMb: 10, vramMb: 0, source: 'declared' as const, cores },
    });
    const capacity = { ramFreeMb: 1000, vramFreeMb: null, ramTotalMb: 8000, vramTotalMb: null, cores: 8 };
    const busy = { ...running('x', 10), reservation: { ramMb: 10, vramMb: 0, source: 'declared' as const, cores: 2 } };
    const r = plan({ capacity, queue: [cjob('a', 4), cjob('b', 6), cjob('c', 2), cjob('d', 0.5)], running: [busy] });
    expect(r.admit).toEqual(['a', 'c']);
    expect(r.waiting.get('b')?.waitingReason).toBe('needs 6 cores, 2 free');
    expect(r.waiting.get('d')?.waitingReason).toBe('needs 0.5 cores, 0 free');
    expect([r.coresAvailable, r.reservedCores]).toEqual([6, 2]);
    // Wider than the machine: it waits for every core, then runs alone instead of never.
    const wide = plan({ capacity, queue: [cjob('w', 16)], running: [busy] });
    expect(wide.waiting.get('w')?.waitingReason).toBe('needs all 8 cores of this machine (estimated 16 cores), 6 free');
    expect(plan({ capacity, queue: [cjob('w', 16)] }).admit).toEqual(['w']);
    // Without a core count, cores are not a constraint.
    expect(plan({ queue: [cjob('a', 1000)] }).admit).toEqual(['a']);
  });

  it('formats sizes for people', () => {
    expect(formatMb(300)).toBe('300 MB');
    expect(formatMb(3174)).toBe('3.1 GB');
    expect(formatMb(-5)).toBe('0 MB');
  });
});
