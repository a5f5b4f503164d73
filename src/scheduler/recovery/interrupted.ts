/**
 * Runs the backend's own stop interrupted (docs/retry.md): ABORTED because their eval process
 * lost its parent, was gone after a restart, or ran inside the backend. `serve --resume`
 * retries these, and only these: a run killed for any other reason stays as it ended.
 */
import type { RunSummary } from '../../store/types.js';

/** The ABORTED messages of parent-watch (eval process), recovery and the reap of an adopted process. */
const BACKEND_GONE =
  /stopped because (the IPC channel to the parent closed|the parent \(pid \d+\) exited)|the backend (restarted|stopped)|ran inside the backend, which stopped|while the backend was restarting/;

export function interruptedByBackend(summary: Pick<RunSummary, 'status' | 'error'>): boolean {
  return summary.status === 'ABORTED' && summary.error?.code === 'ABORTED' && BACKEND_GONE.test(summary.error.message);
}
