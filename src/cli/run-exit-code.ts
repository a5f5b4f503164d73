/** How `evalctl run` and `evalctl retry` exit for a run that ended (docs/cli.md lists the codes). */
import { isInputFault } from '../errors.js';
import type { RunSummary } from '../store/types.js';

/** A run that finished but whose plays hit infrastructure failures past its `maxInfraErrorRate` (INFRA_ERRORS). */
export const INFRA_FAILURE_EXIT_CODE = 3;

/** 0 for COMPLETED, 3 for INFRA_ERRORS, 2 for a run refused for its input, else 1. */
export function runExitCode(summary: Pick<RunSummary, 'status' | 'error'>): number {
  if (summary.status === 'COMPLETED') return 0;
  const code = summary.error?.code;
  if (code === 'INFRA_ERRORS') return INFRA_FAILURE_EXIT_CODE;
  // A run refused for its input exits 2, like input refused before the run started.
  return isInputFault(code) ? 2 : 1;
}
