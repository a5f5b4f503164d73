/** The env's dataset and split choices for a form, asked again a moment after the boxes stop changing. */
import { useEffect, useState } from 'react';
import type { ResultOf } from '../api/graphql.js';
import { EPISODE_CHOICES, type GraphInfo, type NodesetInfo } from '../api/queries.js';
import { useQuery } from './useQuery.js';

type Choices = NonNullable<NonNullable<ResultOf<typeof EPISODE_CHOICES>['graph']>['episodeChoices']>;
export type ChoiceField = Choices['fields'][number];

export interface EpisodeChoicesView {
  dataset: ChoiceField | undefined;
  split: ChoiceField | undefined;
  /** Episodes the dataset and split offer; null when unknown. */
  episodes: number | null;
  problem: string | null;
}

/**
 * What the manifest of a graph's env declares for its picker, for an env the server cannot list
 * the choices of (one that is not built in: only its host knows them): each field's default,
 * no options. The env is the one the eval process picks episodes with: the first replicated
 * nodeset with a panel by name, else the first shared one (src/nodeset-registry/env-panel-nodeset.ts).
 */
export function declaredChoices(graph: GraphInfo | undefined, nodesets: readonly NodesetInfo[]): EpisodeChoicesView | null {
  if (!graph) return null;
  const used = new Set(graph.nodes.map((n) => n.nodeset));
  const envs = nodesets.filter((n) => n.panel && used.has(n.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const env = envs.find((n) => n.parallelism === 'REPLICATED') ?? envs.find((n) => n.parallelism === 'SHARED');
  if (!env?.panel) return null;
  const field = (name: 'dataset' | 'split'): ChoiceField | undefined => {
    const f = env.panel?.fields.find((x) => x.name === name);
    if (!f) return undefined;
    const value = typeof f.default === 'string' || typeof f.default === 'number' ? String(f.default) : null;
    return { name, options: [], value };
  };
  return { dataset: field('dataset'), split: field('split'), episodes: null, problem: null };
}

/**
 * Null until known; for a graph whose env only its host can answer for (not built in),
 * `declared` (what its manifest says, see declaredChoices).
 */
export function useEpisodeChoices(
  graphName: string,
  dataset: string,
  split: string,
  declared: EpisodeChoicesView | null = null,
): EpisodeChoicesView | null {
  const [asked, setAsked] = useState({ dataset, split });
  useEffect(() => {
    // Typing a name would otherwise ask once per key.
    const t = setTimeout(() => setAsked({ dataset, split }), 250);
    return () => clearTimeout(t);
  }, [dataset, split]);
  const q = useQuery(
    EPISODE_CHOICES,
    { graph: graphName, dataset: asked.dataset.trim() || null, split: asked.split.trim() || null },
    { skip: !graphName, keepPrevious: true },
  );
  const answered = q.data?.graph?.name === graphName;
  const c = answered ? q.data?.graph?.episodeChoices : null;
  if (!c) return answered ? declared : null;
  return {
    dataset: c.fields.find((f) => f.name === 'dataset'),
    split: c.fields.find((f) => f.name === 'split'),
    episodes: c.episodes ?? null,
    problem: c.problem ?? null,
  };
}

/** One line for a form: how many episodes the selection has, or why it has none. */
export function choicesHint(c: EpisodeChoicesView | null): string | undefined {
  if (!c) return undefined;
  if (c.problem) return c.problem;
  if (c.episodes == null) return undefined;
  return `${c.episodes} episode${c.episodes === 1 ? '' : 's'} (indices 0–${c.episodes - 1})`;
}
