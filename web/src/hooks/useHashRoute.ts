import { useEffect, useState } from 'react';

/** The runs list's filters, kept in the address so a filtered list can be bookmarked and shared. */
export interface RunsFilters {
  status: string;
  graph: string;
  tag: string;
  /** Free text matched against id, graph, name, tags and note. */
  q: string;
  page: number;
}

export const NO_RUNS_FILTERS: RunsFilters = { status: '', graph: '', tag: '', q: '', page: 0 };

export type Route =
  | { page: 'runs'; filters: RunsFilters }
  | { page: 'compare'; baseline: string | null; candidates: string[] }
  | { page: 'sweep'; sweepId: string }
  | { page: 'run'; runId: string; episode: number | null }
  | { page: 'queue' }
  | { page: 'workers' }
  | { page: 'new'; graph: string | null; from: string | null }
  | { page: 'play'; graph: string | null }
  | { page: 'notFound'; hash: string };

/**
 * `#/runs[?status=&graph=&tag=&q=&page=]`, `#/runs/<id>`, `#/runs/<id>/episodes/<i>`, `#/queue`, `#/workers`,
 * `#/new[?graph=g|?from=<runId>]`, `#/play[?graph=g]`, `#/compare?baseline=<id>&candidates=<id>,<id>`, `#/sweeps/<id>`.
 */
export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/runs';
  const [path = '', qs = ''] = raw.split('?');
  const params = new URLSearchParams(qs);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0 || (parts[0] === 'runs' && parts.length === 1)) return { page: 'runs', filters: runsFiltersOf(params) };
  if (parts[0] === 'sweeps' && parts[1] && parts.length === 2) return { page: 'sweep', sweepId: parts[1] };
  if (parts[0] === 'compare' && parts.length === 1)
    return {
      page: 'compare',
      baseline: params.get('baseline') || null,
      candidates: (params.get('candidates') ?? '').split(',').filter(Boolean),
    };
  if (parts[0] === 'runs' && parts[1]) {
    if (parts.length === 2) return { page: 'run', runId: parts[1], episode: null };
    if (parts[2] === 'episodes' && parts[3] && /^\d+$/.test(parts[3])) return { page: 'run', runId: parts[1], episode: Number(parts[3]) };
  }
  if (parts[0] === 'queue' && parts.length === 1) return { page: 'queue' };
  if (parts[0] === 'workers' && parts.length === 1) return { page: 'workers' };
  if (parts[0] === 'new' && parts.length === 1) return { page: 'new', graph: params.get('graph'), from: params.get('from') };
  if (parts[0] === 'play' && parts.length === 1) return { page: 'play', graph: params.get('graph') };
  return { page: 'notFound', hash };
}

function runsFiltersOf(params: URLSearchParams): RunsFilters {
  const page = Number(params.get('page') ?? 0);
  return {
    status: params.get('status') ?? '',
    graph: params.get('graph') ?? '',
    tag: params.get('tag') ?? '',
    q: params.get('q') ?? '',
    page: Number.isInteger(page) && page > 0 ? page : 0,
  };
}

export const href = {
  runs: (f: Partial<RunsFilters> = {}) => {
    const params = new URLSearchParams();
    for (const k of ['status', 'graph', 'tag', 'q'] as const) if (f[k]) params.set(k, f[k]);
    if (f.page) params.set('page', String(f.page));
    const qs = params.toString();
    return qs ? `#/runs?${qs}` : '#/runs';
  },
  compare: (baseline: string, candidates: readonly string[]) =>
    `#/compare?baseline=${encodeURIComponent(baseline)}&candidates=${candidates.map(encodeURIComponent).join(',')}`,
  sweep: (id: string) => `#/sweeps/${encodeURIComponent(id)}`,
  runAgain: (runId: string) => `#/new?from=${encodeURIComponent(runId)}`,
  run: (id: string) => `#/runs/${encodeURIComponent(id)}`,
  episode: (id: string, index: number) => `#/runs/${encodeURIComponent(id)}/episodes/${index}`,
  queue: () => '#/queue',
  workers: () => '#/workers',
  newRun: (graph?: string) => (graph ? `#/new?graph=${encodeURIComponent(graph)}` : '#/new'),
  play: (graph?: string) => (graph ? `#/play?graph=${encodeURIComponent(graph)}` : '#/play'),
};

export function navigate(to: string): void {
  if (location.hash !== to) location.hash = to;
}

export function useHashRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}
