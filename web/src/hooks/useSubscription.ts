import { useEffect, useRef } from 'react';
import { subscribe, type GraphQLRequestError } from '../api/client.js';

export interface SubscriptionCallbacks<T> {
  onData(data: T): void;
  onError?(err: GraphQLRequestError): void;
  onComplete?(): void;
}

/** Holds a subscription open while mounted and `enabled`; reopens it when the variables change. */
export function useSubscription<T>(
  query: string,
  variables: Record<string, unknown>,
  callbacks: SubscriptionCallbacks<T>,
  enabled = true,
): void {
  const cb = useRef(callbacks);
  cb.current = callbacks;
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (!enabled) return;
    return subscribe<T>(query, JSON.parse(key) as Record<string, unknown>, {
      next: (d) => cb.current.onData(d),
      error: (e) => cb.current.onError?.(e),
      complete: () => cb.current.onComplete?.(),
    });
  }, [query, key, enabled]);
}
