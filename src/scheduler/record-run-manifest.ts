/**
 * Writes a run's manifest.json at submit (the scheduler's and `evalctl run`'s), from the
 * nodesets its graph uses and, when its episodes come from env_dataset, the dataset it reads.
 */
import { envPanelNodeset } from '../nodeset-registry/env-panel-nodeset.js';
import { DatasetCatalog } from '../datasets/dataset-catalog.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import { buildRunManifest, writeRunManifest, type ManifestInput, type RunManifest } from '../store/run-manifest.js';
import type { RunSpec } from '../store/types.js';
import { DATASET_ENV } from './dataset-selection.js';

/** The dataset folder and split the run reads, chosen as the submit check chooses them; undefined when none. */
export async function datasetOfRun(
  nodesets: readonly NodesetEntry[],
  spec: Pick<RunSpec, 'dataset' | 'split'>,
  workspaceDir: string | undefined,
): Promise<ManifestInput['dataset']> {
  const env = envPanelNodeset(nodesets);
  // As the submit check: only the built-in env_dataset is known to read the catalog's datasets.
  if (env?.name !== DATASET_ENV || env.source !== 'builtin') return undefined;
  const fallback = env.manifest.panel?.fields.find((f) => f.name === 'dataset')?.default;
  const name = spec.dataset ?? (fallback === undefined ? undefined : String(fallback));
  if (name === undefined) return undefined;
  const catalog = new DatasetCatalog(workspaceDir ? { workspaceDir } : {});
  const entry = catalog.entry(name);
  const split = spec.split ?? (await catalog.index(name)).defaultSplit;
  return { name, source: entry.source, dir: entry.dir, split };
}

export async function recordRunManifest(
  runDir: string,
  spec: RunSpec,
  nodesets: readonly NodesetEntry[],
  workspaceDir: string | undefined,
): Promise<RunManifest> {
  const manifest = await buildRunManifest({
    graph: spec.graph,
    nodesets,
    dataset: await datasetOfRun(nodesets, spec, workspaceDir),
    models: spec.models,
  });
  await writeRunManifest(runDir, manifest);
  return manifest;
}
