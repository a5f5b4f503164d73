/** The env's dataset and split choices for a form, asked again a moment after the boxes stop changing. */
import { useEffect, useState } from 'react';
import type { ResultOf } from '../api/graphql.js';
import { EPISODE_CHOICES } from '../api/queries.js';
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

/** Null until known, and for a graph whose env only its host can answer for (not built in). */
export function useEpisodeChoices(graphName: string, dataset: string, split: string): EpisodeChoicesView | null {
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
  const c = q.data?.graph?.name === graphName ? q.data.graph.episodeChoices : null;
  if (!c) return null;
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
