/** The interface the scheduler hands admitted runs to when they run on other machines (scale-out). */
import type { RunSpec, RunSummary } from '../../store/types.js';

/** Where runs go when the scheduler does not run them itself. */
export interface RemoteRuns {
  /** Throws a coded error (REDIS_UNAVAILABLE) when no run could be handed over now. */
  assertReachable(): Promise<void>;
  /**
   * Hands the run over; resolves with its final summary once it has ended (summary.json,
   * report.json written; _DONE is left to the scheduler). `signal` aborts it (a cancel).
   */
  execute(run: { spec: RunSpec; runDir: string; signal: AbortSignal; onProgress(episodesDone: number): void }): Promise<RunSummary>;
}
