/**
 * The dataset → split → episode addressing shared by the built-in envs: fixed splits with a
 * fixed episode count each, checked with errors that name the env and the bad value.
 */
import { BadInputError } from '../../errors.js';
import type { PanelValues } from '../../core/types.js';

export const SPLITS = ['train', 'val', 'test'] as const;
export type SplitName = (typeof SPLITS)[number];
/** Fixed stream ids of the splits in episode seeds (never renumber). */
export const SPLIT_IDS: Record<SplitName, number> = { train: 1, val: 2, test: 3 };

export interface EpisodeAddress {
  dataset: string;
  split: SplitName;
  index: number;
}

export interface EpisodeCatalog {
  /** Used in error messages, e.g. `gridnav`. */
  env: string;
  datasets: Record<string, { splits: Record<SplitName, number> }>;
  defaultDataset: string;
  defaultSplit: SplitName;
}

/** Reads dataset, split and episode from panel values; unset fields take the defaults (the episode: `fallbackIndex`). */
export function resolveEpisode(catalog: EpisodeCatalog, values: PanelValues, fallbackIndex = 0): EpisodeAddress {
  const dataset = String(values.dataset ?? catalog.defaultDataset);
  const spec = catalog.datasets[dataset];
  if (!spec) {
    throw new BadInputError(
      `unknown ${catalog.env} dataset ${JSON.stringify(dataset)}; known: ${Object.keys(catalog.datasets).join(', ')}`,
    );
  }
  const split = String(values.split ?? catalog.defaultSplit);
  if (!(SPLITS as readonly string[]).includes(split)) {
    throw new BadInputError(`unknown ${catalog.env} split ${JSON.stringify(split)}; known: ${SPLITS.join(', ')}`);
  }
  const raw = values.episode ?? fallbackIndex;
  const index = typeof raw === 'number' ? raw : Number(raw);
  const count = spec.splits[split as SplitName];
  if (!Number.isInteger(index) || index < 0 || index >= count) {
    throw new BadInputError(
      `${catalog.env} episode ${JSON.stringify(raw)} is out of range: ${dataset}/${split} has episodes 0..${count - 1}`,
    );
  }
  return { dataset, split: split as SplitName, index };
}

/** Allowed values of a cascade field given the fields before it. */
export function fieldOptions(catalog: EpisodeCatalog, field: string, values: PanelValues): Array<string | number> {
  switch (field) {
    case 'dataset':
      return Object.keys(catalog.datasets);
    case 'split':
      resolveEpisode(catalog, { ...values, split: catalog.defaultSplit, episode: 0 });
      return [...SPLITS];
    case 'episode': {
      const { dataset, split } = resolveEpisode(catalog, { ...values, episode: 0 });
      return Array.from({ length: catalog.datasets[dataset]!.splits[split] }, (_, i) => i);
    }
    default:
      throw new BadInputError(`unknown ${catalog.env} panel field ${JSON.stringify(field)}; fields: dataset, split, episode`);
  }
}

export function episodeId(address: EpisodeAddress): string {
  return `${address.dataset}/${address.split}/${address.index}`;
}
