import { useEffect, useState } from 'react';

export type Route =
  | { page: 'runs' }
  | { page: 'run'; runId: string; episode: number | null }
  | { page: 'queue' }
  | { page: 'new'; graph: string | null }
  | { page: 'play'; graph: string | null }
  | { page: 'notFound'; hash: string };

/** `#/runs`, `#/runs/<id>`, `#/runs/<id>/episodes/<i>`, `#/queue`, `#/new[?graph=g]`, `#/play[?graph=g]`. */
export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/runs';
  const [path = '', qs = ''] = raw.split('?');
  const params = new URLSearchParams(qs);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0 || (parts[0] === 'runs' && parts.length === 1)) return { page: 'runs' };
  if (parts[0] === 'runs' && parts[1]) {
    if (parts.length === 2) return { page: 'run', runId: parts[1], episode: null };
    if (parts[2] === 'episodes' && parts[3] && /^\d+$/.test(parts[3])) return { page: 'run', runId: parts[1], episode: Number(parts[3]) };
  }
  if (parts[0] === 'queue' && parts.length === 1) return { page: 'queue' };
  if (parts[0] === 'new' && parts.length === 1) return { page: 'new', graph: params.get('graph') };
  if (parts[0] === 'play' && parts.length === 1) return { page: 'play', graph: params.get('graph') };
  return { page: 'notFound', hash };
}

export const href = {
  runs: () => '#/runs',
  run: (id: string) => `#/runs/${encodeURIComponent(id)}`,
  episode: (id: string, index: number) => `#/runs/${encodeURIComponent(id)}/episodes/${index}`,
  queue: () => '#/queue',
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
