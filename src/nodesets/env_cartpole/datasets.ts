/**
 * Cart-pole episode sets. An episode's initial state depends on (dataset, split, index)
 * only, never on the run seed.
 */
import { createPrng } from '../../core/prng.js';
import { SPLIT_IDS, type EpisodeAddress, type EpisodeCatalog, type SplitName } from '../_lib/episode-address.js';
import { initialState, type CartPoleState } from './physics.js';

export interface DatasetSpec {
  /** Fixed stream id of the dataset in the episode seed (never reuse or renumber one). */
  id: number;
  description: string;
  splits: Record<SplitName, number>;
}

export const DATASETS: Record<string, DatasetSpec> = {
  classic: {
    id: 1,
    description: 'CartPole-v1: every state component starts uniform in ±0.05',
    splits: { train: 1000, val: 200, test: 200 },
  },
};

export const CATALOG: EpisodeCatalog = { env: 'cart-pole', datasets: DATASETS, defaultDataset: 'classic', defaultSplit: 'val' };

const CARTPOLE_DOMAIN = 0x6361_7274;

export function episodeInitialState(address: EpisodeAddress): CartPoleState {
  return initialState(createPrng(CARTPOLE_DOMAIN, DATASETS[address.dataset]!.id, SPLIT_IDS[address.split], address.index));
}
