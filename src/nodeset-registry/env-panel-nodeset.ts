/**
 * Which of a run's nodesets picks its episodes through its panel: the first replicated one with a
 * panel (by name), else the first shared one with a panel. A shared env is driven by every
 * worker of its run at once, so each of its loads carries its own selection (host protocol,
 * `POST /panel/load` with `values`); the eval process starts it for its run alone.
 */
import { byName } from '../core/by-name.js';
import type { NodesetEntry } from './registry.js';

export function envPanelNodeset(nodesets: readonly NodesetEntry[]): NodesetEntry | undefined {
  const sorted = [...nodesets].sort(byName);
  return (
    sorted.find((e) => e.manifest.parallelism === 'replicated' && e.manifest.panel) ??
    sorted.find((e) => e.manifest.parallelism === 'shared' && e.manifest.panel)
  );
}

/** Shared nodesets a backend may lend to runs: a shared env panel is each run's own (its panel loads carry a run's workspace and files). */
export const lendable = (e: NodesetEntry): boolean => e.manifest.parallelism === 'shared' && !e.manifest.panel;
