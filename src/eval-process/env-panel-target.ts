/** The env panel a run's episodes are picked on, from the nodesets its graph uses. */
import { envPanelNodeset } from '../nodeset-registry/env-panel-nodeset.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import type { EnvPanelTarget } from './batch-eval-runner.js';

/** The nodeset whose panel picks episodes (nodeset-registry/env-panel-nodeset.ts); none when no nodeset has a panel. */
export function envPanelOf(used: readonly NodesetEntry[]): EnvPanelTarget | undefined {
  const env = envPanelNodeset(used);
  if (!env?.manifest.panel) return undefined;
  return { nodeset: env.name, panel: env.manifest.panel, ...(env.manifest.parallelism === 'shared' ? { shared: true } : {}) };
}
