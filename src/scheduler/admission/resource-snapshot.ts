/**
 * The machine's resources as the scheduler last saw them: measured free RAM/VRAM where it can
 * be measured, else the static ledger's capacity less the running jobs' reservations.
 */
import type { Job } from '../job/job.js';
import type { ResourceSample } from './resource-sampler.js';
import type { ResourceSnapshot } from '../types.js';

export interface SnapshotInput {
  sample: ResourceSample;
  sampledAt: Date;
  staticCapacity: { ramMb?: number; vramMb?: number };
  running: Iterable<Job>;
  lockHolder: string | null;
}

export function resourceSnapshot({ sample: s, sampledAt, staticCapacity, running, lockHolder }: SnapshotInput): ResourceSnapshot {
  let reservedRam = 0;
  let reservedVram = 0;
  for (const j of running) {
    reservedRam += j.estimate.ramMb;
    reservedVram += j.estimate.vramMb;
  }
  return {
    ramTotalMb: s.ramTotalMb ?? staticCapacity.ramMb ?? 0,
    ramFreeMb: s.ramFreeMb ?? Math.max(0, (staticCapacity.ramMb ?? 0) - reservedRam),
    vramTotalMb: s.vramTotalMb ?? staticCapacity.vramMb ?? null,
    vramFreeMb: s.vramFreeMb ?? (staticCapacity.vramMb !== undefined ? Math.max(0, staticCapacity.vramMb - reservedVram) : null),
    reservedRamMb: reservedRam,
    reservedVramMb: reservedVram,
    ramMeasured: s.ramFreeMb !== null,
    vramMeasured: s.vramFreeMb !== null,
    gpus: s.gpus?.map((g) => ({ ...g })) ?? [],
    interactiveLockHolder: lockHolder,
    sampledAt: sampledAt.toISOString(),
  };
}
