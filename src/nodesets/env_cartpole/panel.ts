/** The cart-pole episode picker: dataset → split → episode, and `load`, which creates the episode's state. */
import type { EnvPanelHandler, PanelLoadResult, PanelValues } from '../../core/types.js';
import { episodeId, fieldOptions, resolveEpisode } from '../_lib/episode-address.js';
import { CATALOG } from './datasets.js';
import { CARTPOLE_STEP_BUDGET, createEpisode, type CartPoleEpisode } from './episode.js';
import { MAX_STEPS } from './physics.js';

export function createPanel(episodes: Map<string, CartPoleEpisode>): EnvPanelHandler {
  return {
    options: (field: string, values: PanelValues) => fieldOptions(CATALOG, field, values),
    load(values: PanelValues, episodeKey: string): PanelLoadResult {
      const ep = createEpisode(resolveEpisode(CATALOG, values));
      episodes.set(episodeKey, ep);
      return {
        episodeId: episodeId(ep.address),
        scene: ep.address.dataset,
        instruction: `Keep the pole upright for ${MAX_STEPS} steps.`,
        task: 'balance',
        stepBudget: CARTPOLE_STEP_BUDGET,
      };
    },
  };
}
