/**
 * All episodes of a run, in index order, kept current: loaded in pages, extended by
 * `episodeCompleted` events, and reloaded when the run's count says some were missed.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { gql, type GraphQLRequestError } from '../api/client.js';
import { EPISODE_COMPLETED, RUN_EPISODES } from '../api/queries.js';
import type { EpisodeRow } from '../api/fragments.js';
import { useSubscription } from './useSubscription.js';
import { useThrottled } from './useThrottled.js';

/** A small first page puts rows on screen at once; the rest follows in large pages. */
const FIRST_PAGE = 200;
// The server prices a page at about (fields × first); 2,000 rows stay well under its cost limit.
const PAGE = 2000;

export interface RunEpisodes {
  episodes: EpisodeRow[];
  /** True until every page has arrived (episodes may already hold the first ones). */
  loading: boolean;
  error: GraphQLRequestError | null;
}

function merge(into: EpisodeRow[], more: EpisodeRow[]): EpisodeRow[] {
  const byIndex = new Map(into.map((e) => [e.index, e]));
  for (const e of more) byIndex.set(e.index, e);
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

export function useRunEpisodes(runId: string, episodesDone: number | undefined, live: boolean): RunEpisodes {
  const [state, setState] = useState<RunEpisodes & { runId: string }>({ runId, episodes: [], loading: true, error: null });
  const loadingRef = useRef(false);
  const againRef = useRef(false);

  const load = useCallback(async (): Promise<void> => {
    if (loadingRef.current) {
      againRef.current = true;
      return;
    }
    loadingRef.current = true;
    try {
      for (let offset = 0; ; ) {
        const first = offset === 0 ? FIRST_PAGE : PAGE;
        const d = await gql(RUN_EPISODES, { id: runId, offset, first });
        const page = d.run?.episodes;
        offset += first;
        const done = !page || offset >= page.total;
        const items = page?.items ?? [];
        setState((s) => (s.runId === runId ? { runId, episodes: merge(s.episodes, items), loading: !done, error: null } : s));
        if (done) break;
      }
    } catch (err) {
      setState((s) => (s.runId === runId ? { ...s, loading: false, error: err as GraphQLRequestError } : s));
    } finally {
      loadingRef.current = false;
      if (againRef.current) {
        againRef.current = false;
        void load();
      }
    }
  }, [runId]);

  useEffect(() => {
    setState({ runId, episodes: [], loading: true, error: null });
    void load();
  }, [runId, load]);

  // Episodes arrive one message each; a busy run sends many a second, so they are drawn in batches.
  const pending = useRef<EpisodeRow[]>([]);
  const flushTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (flushTimer.current) clearTimeout(flushTimer.current);
      flushTimer.current = null;
      pending.current = [];
    },
    [runId],
  );
  useSubscription(
    EPISODE_COMPLETED,
    // Episodes finished before now come from the query; reloads fill any gap between the two.
    { runId, includeExisting: false },
    {
      onData: (d) => {
        pending.current.push(d.episodeCompleted);
        flushTimer.current ??= setTimeout(() => {
          flushTimer.current = null;
          const batch = pending.current;
          pending.current = [];
          setState((s) => (s.runId === runId ? { ...s, episodes: merge(s.episodes, batch) } : s));
        }, 100);
      },
    },
    live,
  );

  const reload = useThrottled(() => void load(), 1000);
  const have = state.runId === runId ? state.episodes.length : 0;
  useEffect(() => {
    if (!state.loading && episodesDone != null && episodesDone > have) reload();
  }, [episodesDone, have, state.loading, reload]);

  // Once the run ends, read the final records (their fields may have been completed at the end).
  const wasLive = useRef(live);
  useEffect(() => {
    if (wasLive.current && !live) void load();
    wasLive.current = live;
  }, [live, load]);

  return state.runId === runId ? state : { episodes: [], loading: true, error: null };
}
