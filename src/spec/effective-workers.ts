/**
 * The workers a run really uses: never more than it has episodes (a worker without an episode
 * would only start hosts that idle), never fewer than one. Admission estimates, calibration
 * and the eval process all count these, so a 16-worker run of 3 episodes costs 3 workers.
 */
export function effectiveWorkerCount(spec: { workerCount: number; episodeCount: number; repeats?: number | undefined }): number {
  // Plays, not episodes: with repeats every play is a unit of work.
  return Math.max(1, Math.min(spec.workerCount, spec.episodeCount * (spec.repeats ?? 1)));
}
