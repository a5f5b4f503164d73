/** The gridnav episode picker: dataset → split → episode, and `load`, which creates the episode's state. */
import type { EnvPanelHandler, PanelLoadResult, PanelValues } from '../../core/types.js';
import { episodeId, fieldOptions, resolveEpisode } from '../_lib/episode-address.js';
import { CATALOG, DATASETS } from './datasets.js';
import { createEpisode, fewestActions, type GridNavEpisode } from './episode.js';

/** Shortest-path length bands (as multiples of the dataset's least start-goal distance) that name an episode's task. */
const TASK_BANDS: ReadonlyArray<[number, string]> = [
  [1.5, 'near'],
  [2.5, 'mid'],
];

export function taskOf(ep: GridNavEpisode): string {
  const ratio = ep.shortestPathLength / DATASETS[ep.address.dataset]!.minGoalDistance;
  return TASK_BANDS.find(([limit]) => ratio < limit)?.[1] ?? 'far';
}

export function describe(ep: GridNavEpisode): PanelLoadResult {
  const { grid, goal } = ep.maze;
  return {
    episodeId: episodeId(ep.address),
    scene: `${ep.address.dataset} maze ${grid.rows}×${grid.cols}`,
    instruction: `Go to the goal at row ${goal[0]}, column ${goal[1]} and stop there.`,
    task: taskOf(ep),
    stepBudget: ep.stepBudget,
  };
}

export function createPanel(episodes: Map<string, GridNavEpisode>): EnvPanelHandler {
  return {
    options: (field: string, values: PanelValues) => fieldOptions(CATALOG, field, values),
    load(values: PanelValues, episodeKey: string): PanelLoadResult {
      const ep = createEpisode(resolveEpisode(CATALOG, values));
      episodes.set(episodeKey, ep);
      return describe(ep);
    },
    // The fewest actions that solve it: a planner plays about that many steps, a worse agent more.
    cost: (values: PanelValues) => fewestActions(resolveEpisode(CATALOG, values)),
  };
}
