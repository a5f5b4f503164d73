/**
 * Which of a run's nodesets picks its episodes through its panel: the first replicated one with a
 * panel (by name), else the first shared one with a panel. A shared env is driven by every
 * worker of its run at once, so each of its loads carries its own selection (host protocol,
 * `POST /panel/load` with `values`); the eval process starts it for its run alone.
 */
import { byName } from '../core/by-name.js';
import { servedInline } from './placement.js';
import type { NodesetEntry } from './registry.js';

export function envPanelNodeset(nodesets: readonly NodesetEntry[]): NodesetEntry | undefined {
  const sorted = [...nodesets].sort(byName);
  return (
    sorted.find((e) => e.manifest.parallelism === 'replicated' && e.manifest.panel) ??
    sorted.find((e) => e.manifest.parallelism === 'shared' && e.manifest.panel)
  );
}

/**
 * Shared nodesets a backend may lend to runs: a shared env panel is each run's own (its panel loads
 * carry a run's workspace and files), and a light nodeset each eval process serves on its own
 * thread (inline, with no batcher that other runs' calls could fill) costs a process hand-off per
 * call when lent, for nothing in return.
 */
export const lendable = (e: NodesetEntry): boolean =>
  e.manifest.parallelism === 'shared' && !e.manifest.panel && !(servedInline(e.manifest) && e.manifest.batching === undefined);
