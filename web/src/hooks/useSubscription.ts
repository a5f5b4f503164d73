import { useEffect, useRef } from 'react';
import { subscribe, type GraphQLRequestError } from '../api/client.js';
import type { TadaDocumentNode } from '../api/graphql.js';

export interface SubscriptionCallbacks<T> {
  onData(data: T): void;
  onError?(err: GraphQLRequestError): void;
  onComplete?(): void;
}

/** Holds a subscription open while mounted and `enabled`; reopens it when the variables change. */
export function useSubscription<T, V>(
  query: TadaDocumentNode<T, V>,
  variables: V,
  callbacks: SubscriptionCallbacks<T>,
  enabled = true,
): void {
  const cb = useRef(callbacks);
  cb.current = callbacks;
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (!enabled) return;
    return subscribe(query, JSON.parse(key) as V, {
      next: (d) => cb.current.onData(d),
      error: (e) => cb.current.onError?.(e),
      complete: () => cb.current.onComplete?.(),
    });
  }, [query, key, enabled]);
}
