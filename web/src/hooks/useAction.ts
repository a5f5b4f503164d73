import { useCallback, useState } from 'react';
import { GraphQLRequestError } from '../api/client.js';

export interface Action {
  /** True while the action runs: its button shows it and is disabled. */
  busy: boolean;
  /** The last refusal's message, cleared when the action runs again. */
  error: string | null;
  /** Runs `fn`, keeping `busy` and `error` up to date; never throws. */
  run(fn: () => Promise<unknown>): Promise<void>;
}

/** A button's mutation: busy while it runs, the server's refusal kept for display. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(err instanceof GraphQLRequestError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}
