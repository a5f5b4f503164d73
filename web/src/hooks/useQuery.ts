import { useCallback, useEffect, useRef, useState } from 'react';
import { gql, GraphQLRequestError } from '../api/client.js';
import type { TadaDocumentNode } from '../api/graphql.js';

export interface QueryState<T> {
  data: T | undefined;
  error: GraphQLRequestError | undefined;
  /** True until the first answer (or error) arrives; refetches keep the previous data. */
  loading: boolean;
  refetch(): void;
}

export interface QueryOptions {
  /** Refetch this often while mounted. */
  pollMs?: number;
  skip?: boolean;
  /** Keep showing the previous variables' data while the new ones load (paging). */
  keepPrevious?: boolean;
}

/** Runs a query when its variables change; refetch() and polling keep the last data on screen. */
export function useQuery<T, V>(query: TadaDocumentNode<T, V>, variables: V = {} as V, opts: QueryOptions = {}): QueryState<T> {
  const key = JSON.stringify(variables);
  const [state, setState] = useState<{ data?: T; error?: GraphQLRequestError; loading: boolean; key: string }>({ loading: true, key });
  const [tick, setTick] = useState(0);
  const inFlight = useRef<AbortController | null>(null);

  useEffect(() => {
    if (opts.skip) return;
    inFlight.current?.abort();
    const ac = new AbortController();
    inFlight.current = ac;
    gql(query, JSON.parse(key) as V, ac.signal).then(
      (data) => {
        if (!ac.signal.aborted) setState({ data, loading: false, key });
      },
      (error: unknown) => {
        if (ac.signal.aborted) return;
        const err = error instanceof GraphQLRequestError ? error : new GraphQLRequestError([{ message: String(error) }]);
        setState((s) => ({ data: s.key === key ? s.data : undefined, error: err, loading: false, key }));
      },
    );
    return () => ac.abort();
  }, [query, key, tick, opts.skip]);

  useEffect(() => {
    if (!opts.pollMs || opts.skip) return;
    const t = setInterval(() => {
      if (document.visibilityState !== 'hidden') setTick((n) => n + 1);
    }, opts.pollMs);
    return () => clearInterval(t);
  }, [opts.pollMs, opts.skip]);

  const refetch = useCallback(() => setTick((n) => n + 1), []);
  const sameKey = state.key === key;
  return {
    data: sameKey || opts.keepPrevious ? state.data : undefined,
    error: sameKey ? state.error : undefined,
    loading: !sameKey || state.loading,
    refetch,
  };
}
