import { useEffect, useState } from 'react';
import { gql } from '../api/client.js';
import { CANCEL_RUN } from '../api/queries.js';
import { useAction } from '../hooks/useAction.js';

export interface CancelButtonProps {
  runId: string;
  onCancelled?: () => void;
  small?: boolean;
  /** The server already has a cancel for this run (`cancelRequested`): show it stopping, with nothing left to click. */
  stopping?: boolean;
}

/** Cancels a queued or running run after a second click to confirm; shows the refusal if there is one. */
export function CancelButton({ runId, onCancelled, small, stopping }: CancelButtonProps) {
  const [armed, setArmed] = useState(false);
  const { busy, error, run } = useAction();

  useEffect(() => {
    if (!armed) return;
    const t = setTimeout(() => setArmed(false), 4_000);
    return () => clearTimeout(t);
  }, [armed]);

  const click = async () => {
    if (!armed) {
      setArmed(true);
      return;
    }
    setArmed(false);
    await run(async () => {
      await gql(CANCEL_RUN, { id: runId });
      onCancelled?.();
    });
  };
  return (
    <span className="cancel">
      <button
        type="button"
        className={`danger${small ? ' small' : ''}${armed ? ' armed' : ''}`}
        disabled={busy || stopping}
        onClick={click}
        data-testid="cancel-run"
        title={
          stopping
            ? 'Stopping: its in-flight episodes end CANCELLED; finished episodes are kept'
            : armed
              ? 'Click again to cancel; finished episodes are kept'
              : 'Cancel this run'
        }
      >
        {busy || stopping ? 'Cancelling…' : armed ? 'Confirm cancel' : 'Cancel'}
      </button>
      {error && (
        <span className="inline-error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
