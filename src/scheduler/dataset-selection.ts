/**
 * At submit, a run's episode selection is checked where that costs no host: for the built-in
 * env_dataset against the dataset's files, so a bad line or a range past the split is refused
 * at once (DATASET_INVALID or BAD_USER_INPUT) instead of queueing a run that fails; for another
 * built-in env with a panel (env_gridnav, env_cartpole) through its module's panel, loaded once
 * per process. The eval process checks the same through the env's host before its first
 * episode (files edited while queued, and envs that are not built in). The same walks list a
 * built-in env's choices for a form (episodeChoices).
 */
import { envPanelNodeset } from '../nodeset-registry/env-panel-nodeset.js';
import { loadNodesetModule } from '../nodeset-registry/nodeset-module.js';
import {
  checkPanelSelection,
  panelChoices,
  type ChoicesWalk,
  type PanelChoices,
  type PanelWalk,
} from '../nodeset-registry/panel-selection.js';
import { DatasetCatalog } from '../datasets/dataset-catalog.js';
import { NotFoundError, RunInputError } from '../errors.js';
import type { PanelSpec, PanelValues } from '../core/types.js';
import type { DatasetIndex } from '../datasets/dataset-index.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import type { RunInput } from '../spec/run-spec.js';

export const DATASET_ENV = 'env_dataset';

type Selection = Pick<RunInput, 'dataset' | 'split' | 'episodeOffset' | 'episodeCount'>;

/** The datasets a choices walk lists and loads. */
type DatasetsApi = Pick<DatasetCatalog, 'list' | 'index'>;

export interface SelectionCheckOptions {
  /**
   * Check a built-in env's panel even when the input names no dataset, split or offset (the
   * env's defaults). Default true; `evalctl run` passes false: loading the env's module would
   * lengthen every run's start, and the eval process refuses a count past the default split
   * before any episode anyway.
   */
  defaults?: boolean;
}

export async function assertDatasetSelection(
  nodesets: readonly NodesetEntry[],
  input: Selection,
  workspaceDir: string | undefined,
  options: SelectionCheckOptions = {},
): Promise<void> {
  // The env whose panel picks episodes, as the eval process chooses it.
  const env = envPanelNodeset(nodesets);
  if (env?.source !== 'builtin') return;
  if (env.name !== DATASET_ENV) {
    const named = input.dataset !== undefined || input.split !== undefined || input.episodeOffset > 0;
    if (named || options.defaults !== false) await assertModulePanelSelection(env, input);
    return;
  }
  await assertDatasetFiles(env, input, workspaceDir);
}

/**
 * The check of a built-in env other than env_dataset alone (through its module's panel), for a
 * caller that has no workspace to read dataset folders from (Live Play).
 */
export async function assertBuiltinEnvSelection(nodesets: readonly NodesetEntry[], input: Selection): Promise<void> {
  const env = envPanelNodeset(nodesets);
  if (env?.source === 'builtin' && env.name !== DATASET_ENV) await assertModulePanelSelection(env, input);
}

async function assertDatasetFiles(env: NodesetEntry, input: Selection, workspaceDir: string | undefined): Promise<void> {
  const fallback = env.manifest.panel?.fields.find((f) => f.name === 'dataset')?.default;
  const name = input.dataset ?? (fallback === undefined ? undefined : String(fallback));
  if (name === undefined) return;
  const catalog = new DatasetCatalog(workspaceDir ? { workspaceDir } : {});
  let dataset: DatasetIndex;
  try {
    // Its index, read off the request path: submitting against a large dataset neither stalls the server nor loads its rows.
    dataset = await catalog.index(name);
  } catch (err) {
    if (err instanceof NotFoundError) throw new RunInputError(`dataset: ${err.message}`, 'dataset');
    throw err;
  }
  const split = input.split ?? dataset.defaultSplit;
  const count = dataset.splits[split]?.sampleCount;
  if (count === undefined)
    throw new RunInputError(`split: dataset ${name} has no split "${split}"; splits: ${dataset.splitNames.join(', ')}`, 'split');
  const offset = input.episodeOffset ?? 0;
  const last = offset + input.episodeCount - 1;
  if (last >= count) {
    throw new RunInputError(
      `episodes ${offset}..${last} reach past the end of ${name}/${split}, which has samples 0..${count - 1}`,
      offset < count ? 'episodeCount' : 'episodeOffset',
    );
  }
}

/**
 * Checks through the module's own panel. Node keeps an imported module, so loading it again per
 * submit costs nothing. Only `options` is called, which creates no state, and `init` is not: the
 * module instance may be the one an in-process run's hosts initialise. An env whose options need
 * `init` offers none here (any value passes), and its eval process checks the selection.
 */
async function assertModulePanelSelection(env: NodesetEntry, input: Selection): Promise<void> {
  const walk = await moduleWalk(env);
  if (walk) await checkPanelSelection(env.name, walk.spec, input, walk);
}

/** A walk over a built-in env module's panel (`options` only: it creates no state); undefined without one. */
async function moduleWalk(env: NodesetEntry): Promise<(PanelWalk & { spec: PanelSpec }) | undefined> {
  const spec = env.manifest.panel;
  if (!spec || env.manifest.module === undefined) return undefined;
  const panel = (await loadNodesetModule(env.dir, env.manifest)).panel;
  if (!panel) return undefined;
  const chosen: PanelValues = {};
  return {
    spec,
    options: async (field) => panel.options(field, chosen),
    choose: async (field, value) => {
      chosen[field] = value;
    },
  };
}

/** A walk over env_dataset's picker as its files give it: dataset folders, then the chosen one's splits and samples. */
function datasetWalk(catalog: DatasetsApi): ChoicesWalk {
  let dataset: DatasetIndex | undefined;
  let split: string | undefined;
  return {
    options: async (field) => {
      if (field === 'dataset') return catalog.list().map((e) => e.name);
      if (field === 'split') return dataset?.splitNames ?? [];
      return Array.from({ length: (split !== undefined && dataset?.splits[split]?.sampleCount) || 0 }, (_, i) => i);
    },
    choose: async (field, value) => {
      if (field === 'dataset') dataset = await catalog.index(String(value));
      if (field === 'split') split = String(value);
    },
    fallback: (field) => (field === 'split' ? dataset?.defaultSplit : undefined),
  };
}

/** What a graph's env picker offers, for a form: the env, and its fields' choices for `selection`. */
export interface EpisodeChoices extends PanelChoices {
  nodeset: string;
}

/**
 * The choices of the env that picks a run's episodes, for a built-in env (env_dataset through
 * `catalog`, the others through their module's panel); null for a graph without one, or whose
 * env is not built in (its options are known only to its host).
 */
export async function episodeChoices(
  nodesets: readonly NodesetEntry[],
  selection: Pick<Selection, 'dataset' | 'split'>,
  catalog: DatasetsApi,
): Promise<EpisodeChoices | null> {
  const env = envPanelNodeset(nodesets);
  const spec = env?.manifest.panel;
  if (env?.source !== 'builtin' || !spec) return null;
  const walk = env.name === DATASET_ENV ? datasetWalk(catalog) : await moduleWalk(env);
  if (!walk) return null;
  return { nodeset: env.name, ...(await panelChoices(env.name, spec, selection, walk)) };
}
