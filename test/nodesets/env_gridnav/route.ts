/** A scripted gridnav agent that walks a given list of cells, for hand-made metric cases. */
import { HEADING_DELTAS, type Cell } from '../../../src/nodesets/env_gridnav/grid.js';
import type { GridNavObservation } from '../../../src/nodesets/env_gridnav/observation.js';

/** Returns an agent that visits `route` in order (adjacent cells), then stops. */
export function routeAgent(route: readonly Cell[]): (obs: unknown) => string {
  let k = 0;
  return (o: unknown) => {
    const obs = o as GridNavObservation;
    while (k < route.length && route[k]![0] === obs.position[0] && route[k]![1] === obs.position[1]) k++;
    if (k >= route.length) return 'stop';
    const [tr, tc] = route[k]!;
    const want = HEADING_DELTAS.findIndex(([dr, dc]) => obs.position[0] + dr === tr && obs.position[1] + dc === tc);
    if (want < 0) throw new Error(`route cell ${JSON.stringify(route[k])} is not next to ${JSON.stringify(obs.position)}`);
    if (want === obs.heading) return 'forward';
    return (want - obs.heading + 4) % 4 === 3 ? 'turn_left' : 'turn_right';
  };
}
