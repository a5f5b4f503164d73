import { gql } from '../api/client.js';
import { RETRY_RUN } from '../api/queries.js';
import { useAction } from '../hooks/useAction.js';

/** Endings a retry plays again by default (docs/retry.md): the ones that are not the agent's result. */
const RETRIED_ENDINGS = new Set(['CRASHED', 'TIMEOUT', 'ERROR', 'INFRA_ERROR', 'CANCELLED']);

export interface RetryButtonProps {
  runId: string;
  statusCounts: ReadonlyArray<{ status: string; count: number }>;
  episodesDone: number;
  episodeCount: number;
  onQueued?: () => void;
}

/** "Retry failed episodes": queues a new attempt of a finished run playing its failed and missing episodes; hidden when there are none. */
export function RetryButton({ runId, statusCounts, episodesDone, episodeCount, onQueued }: RetryButtonProps) {
  const { busy, error, run } = useAction();
  const failed = statusCounts.reduce((n, c) => n + (RETRIED_ENDINGS.has(c.status) ? c.count : 0), 0);
  const missing = Math.max(0, episodeCount - episodesDone);
  if (failed + missing === 0) return null;
  const click = () =>
    run(async () => {
      await gql(RETRY_RUN, { id: runId });
      onQueued?.();
    });
  return (
    <span className="retry">
      <button
        type="button"
        disabled={busy}
        onClick={click}
        data-testid="retry-run"
        title={`Play again, as a new attempt of this run, the ${failed} crashed, timed-out, failed or stopped episode(s) and the ${missing} that never ran; finished episodes are kept`}
      >
        {busy ? 'Queueing…' : `Retry failed episodes (${failed + missing})`}
      </button>
      {error && (
        <span className="inline-error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
