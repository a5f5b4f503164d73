/**
 * How an episode ended, from what the executor returned (or threw) and which abort fired
 * first. Every branch yields a status; the record keeps the partial metrics either way.
 */
import { errorMessage } from '../errors.js';
import type { ExecutorResult, NodeErrorEntry } from '../core/types.js';
import type { EpisodeStatus } from '../statuses.js';

/** Which abort reached the episode first. */
export type AbortCause = 'timeout' | 'cancel';

export interface EpisodeOutcome {
  status: EpisodeStatus;
  error?: string;
}

export function describeNodeErrors(errors: readonly NodeErrorEntry[]): string {
  const names = [...new Set(errors.map((e) => e.nodeId))];
  const first = errors[0];
  const detail = first ? `: ${first.message} (node "${first.nodeId}", step ${first.step})` : '';
  return `node error in ${names.map((n) => `"${n}"`).join(', ')}${detail}`;
}

function abortedOutcome(cause: AbortCause | undefined, timeoutMs: number, fallback: string): EpisodeOutcome {
  if (cause === 'cancel') return { status: 'CANCELLED', error: 'the run was cancelled' };
  if (cause === 'timeout') return { status: 'TIMEOUT', error: `wall-clock limit of ${timeoutMs} ms reached` };
  return { status: 'CRASHED', error: fallback };
}

export function outcomeOfResult(result: ExecutorResult, cause: AbortCause | undefined, timeoutMs: number): EpisodeOutcome {
  // Once the run is being cancelled, a host that goes away is part of the stop, not a crash.
  if (cause === 'cancel' && result.ending !== 'completed' && result.ending !== 'budget_exhausted')
    return abortedOutcome(cause, timeoutMs, '');
  switch (result.ending) {
    case 'completed':
      return Object.keys(result.metrics).length > 0
        ? { status: 'COMPLETED' }
        : { status: 'NO_VERDICT', error: 'the episode finished but no graphOut received a metric' };
    case 'budget_exhausted':
      // Which budget: the step budget's words come from the executor, a node's own budget's from its `$ending`.
      return result.error !== undefined ? { status: 'BUDGET_EXHAUSTED', error: result.error } : { status: 'BUDGET_EXHAUSTED' };
    case 'infra_error':
      return { status: 'INFRA_ERROR', error: result.error ?? 'infrastructure failure' };
    case 'error':
      return { status: 'ERROR', error: result.nodeErrors.length ? describeNodeErrors(result.nodeErrors) : (result.error ?? 'node error') };
    case 'aborted':
      return abortedOutcome(cause, timeoutMs, `aborted: ${result.error ?? 'no reason given'}`);
    case 'crashed':
      return { status: 'CRASHED', error: result.error ?? 'a host died' };
  }
}

export function outcomeOfException(err: unknown, cause: AbortCause | undefined, timeoutMs: number): EpisodeOutcome {
  return abortedOutcome(cause, timeoutMs, errorMessage(err));
}
