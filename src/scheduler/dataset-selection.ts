/**
 * At submit, a run whose episodes come from env_dataset has its dataset, split and episode
 * range checked against the dataset's files, so a bad line or a range past the split is
 * refused at once (DATASET_INVALID or BAD_USER_INPUT) instead of queueing a run that fails.
 * The eval process checks the same through the env's panel before its first episode.
 */
import { envPanelNodeset } from '../nodeset-registry/env-panel-nodeset.js';
import { DatasetCatalog } from '../datasets/dataset-catalog.js';
import { BadInputError, NotFoundError } from '../errors.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import type { RunInput } from '../spec/run-spec.js';

export const DATASET_ENV = 'env_dataset';

export async function assertDatasetSelection(
  nodesets: readonly NodesetEntry[],
  input: Pick<RunInput, 'dataset' | 'split' | 'episodeOffset' | 'episodeCount'>,
  workspaceDir: string | undefined,
): Promise<void> {
  // The env whose panel picks episodes, as the eval process chooses it.
  const env = envPanelNodeset(nodesets);
  if (env?.name !== DATASET_ENV || env.source !== 'builtin') return;
  const fallback = env.manifest.panel?.fields.find((f) => f.name === 'dataset')?.default;
  const name = input.dataset ?? (fallback === undefined ? undefined : String(fallback));
  if (name === undefined) return;
  const catalog = new DatasetCatalog(workspaceDir ? { workspaceDir } : {});
  let dataset: Awaited<ReturnType<DatasetCatalog['load']>>;
  try {
    dataset = await catalog.load(name);
  } catch (err) {
    if (err instanceof NotFoundError) throw new BadInputError(`dataset: ${err.message}`);
    throw err;
  }
  const split = input.split ?? dataset.defaultSplit;
  const samples = dataset.splits[split];
  if (!samples) throw new BadInputError(`split: dataset ${name} has no split "${split}"; splits: ${dataset.splitNames.join(', ')}`);
  const offset = input.episodeOffset ?? 0;
  const last = offset + input.episodeCount - 1;
  if (last >= samples.length) {
    throw new BadInputError(
      `episodes ${offset}..${last} are past the end of ${name}/${split}, which has samples 0..${samples.length - 1}: lower episodeOffset or episodeCount`,
    );
  }
}
