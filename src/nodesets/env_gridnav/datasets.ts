/**
 * The gridnav datasets: maze sizes per dataset, a fixed episode count per split, and the
 * seed of each episode, which depends on (dataset, split, index) only — never on the run seed,
 * so episode 7 of `standard/val` is the same maze in every run.
 */
import { createPrng, type Prng } from '../../core/prng.js';
import { SPLIT_IDS, type EpisodeAddress, type EpisodeCatalog, type SplitName } from '../_lib/episode-address.js';
import type { MazeSpec } from './maze.js';

export interface DatasetSpec extends MazeSpec {
  /** Fixed stream id of the dataset in the episode seed (never reuse or renumber one). */
  id: number;
  description: string;
  splits: Record<SplitName, number>;
}

export const DATASETS: Record<string, DatasetSpec> = {
  mini: {
    id: 1,
    description: '5×5-room mazes (11×11 cells), quick to solve',
    roomRows: 5,
    roomCols: 5,
    loopFraction: 0.1,
    minGoalDistance: 6,
    splits: { train: 1000, val: 200, test: 200 },
  },
  standard: {
    id: 2,
    description: '10×10-room mazes (21×21 cells)',
    roomRows: 10,
    roomCols: 10,
    loopFraction: 0.1,
    minGoalDistance: 16,
    splits: { train: 2000, val: 500, test: 500 },
  },
  large: {
    id: 3,
    description: '20×20-room mazes (41×41 cells)',
    roomRows: 20,
    roomCols: 20,
    loopFraction: 0.08,
    minGoalDistance: 40,
    splits: { train: 2000, val: 500, test: 500 },
  },
};

export const CATALOG: EpisodeCatalog = { env: 'gridnav', datasets: DATASETS, defaultDataset: 'standard', defaultSplit: 'val' };

/** Stream id that keeps gridnav episode seeds apart from any other user of createPrng. */
const GRIDNAV_DOMAIN = 0x6772_6964;

export function episodePrng(address: EpisodeAddress): Prng {
  const spec = DATASETS[address.dataset]!;
  return createPrng(GRIDNAV_DOMAIN, spec.id, SPLIT_IDS[address.split], address.index);
}
