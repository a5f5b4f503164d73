/**
 * How a job looks from outside the scheduler: a queue entry or an active job for the API and
 * the dashboard, a candidate or a running reservation for admission.
 */
import type { AdmissionCandidate, RunningReservation } from '../admission/admission.js';
import { playCountOf } from '../../spec/repeats.js';
import type { Job } from './job.js';
import type { ActiveJob, QueueEntry } from '../types.js';

/** `position` is 1-based, in admission order. */
export function queueEntry(j: Job, position: number): QueueEntry {
  return {
    runId: j.runId,
    position,
    priority: j.spec.priority,
    graphName: j.spec.graphName,
    // Plays (episodes × repeats), what episodesDone counts.
    episodeCount: playCountOf(j.spec),
    workerCount: j.spec.workerCount,
    createdAt: j.spec.createdAt,
    exclusiveGpu: j.spec.exclusiveGpu,
    waitingReason: j.waitingReason,
    estimate: { ...j.estimate },
    reserving: j.reserving,
  };
}

export function activeJob(j: Job): ActiveJob {
  return {
    runId: j.runId,
    priority: j.spec.priority,
    pid: j.pid,
    graphName: j.spec.graphName,
    startedAt: j.startedAt ?? j.spec.createdAt,
    cancelRequested: j.cancelRequested,
    episodesDone: j.episodesDone,
    episodeCount: playCountOf(j.spec),
    workerCount: j.spec.workerCount,
    viaSubprocess: j.viaSubprocess,
    exclusiveGpu: j.spec.exclusiveGpu,
    reservation: { ...j.estimate },
    rssMb: j.rssMb,
    vramMb: j.vramMb,
  };
}

export function admissionCandidate(j: Job): AdmissionCandidate {
  return {
    runId: j.runId,
    priority: j.spec.priority,
    estimate: j.estimate,
    exclusiveGpu: j.spec.exclusiveGpu,
    skippedSinceMs: j.skippedSinceMs,
  };
}

export function runningReservation(j: Job): RunningReservation {
  return { runId: j.runId, reservation: j.estimate, exclusiveGpu: j.spec.exclusiveGpu, rssMb: j.rssMb, vramMb: j.vramMb };
}
