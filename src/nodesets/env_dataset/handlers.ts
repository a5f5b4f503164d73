/**
 * env_dataset: one dataset sample per episode. The panel picks dataset → split → sample
 * (episode i of a run plays sample `episodeOffset + i`); `sample` emits it at every iteration.
 */
import type { NodeCallArgs, NodeOutputs, NodesetModule, PanelLoadResult, PanelValues } from '../../core/types.js';
import { DatasetCatalog } from '../../datasets/dataset-catalog.js';
import { messagesOf } from '../../datasets/messages-of.js';
import type { Sample } from '../../datasets/types.js';
import { type DatasetAddress, LoadedDatasets } from './catalog-state.js';

interface DatasetEpisode {
  address: DatasetAddress;
  sample: Sample;
}

const INSTRUCTION_CHARS = 300;

export function describe(ep: DatasetEpisode): PanelLoadResult {
  const { address, sample } = ep;
  const cluster = sample.metadata.cluster;
  const task = sample.metadata.task ?? cluster;
  const text = typeof sample.input === 'string' ? sample.input : (sample.input.findLast((m) => m.role === 'user')?.content ?? '');
  return {
    episodeId: `${address.dataset}/${address.split}/${sample.id}`,
    scene: `${address.dataset}/${address.split}`,
    instruction: text.length > INSTRUCTION_CHARS ? `${text.slice(0, INSTRUCTION_CHARS - 1)}…` : text,
    ...(typeof task === 'string' || typeof task === 'number' ? { task: String(task) } : {}),
    sampleId: sample.id,
    ...(cluster !== undefined ? { cluster: String(cluster) } : {}),
  };
}

/** One host's state: the datasets it read when it started (those of `workspaceDir`, else $ACTIVE_WORKSPACE_DIR), and each loaded episode's sample. */
function datasetEnv(workspaceDir?: string): NodesetModule {
  let datasets: LoadedDatasets | undefined;
  const episodes = new Map<string, DatasetEpisode>();

  function loaded(): LoadedDatasets {
    if (!datasets) throw new Error('env_dataset: the datasets are not read yet (init was not called)');
    return datasets;
  }

  function episodeAt(address: DatasetAddress): DatasetEpisode {
    return { address, sample: loaded().get(address.dataset).splits[address.split]![address.index]! };
  }

  function sample({ ctx }: NodeCallArgs): NodeOutputs {
    let ep = episodes.get(ctx.episodeKey);
    if (!ep) {
      // Never loaded through the panel: the default dataset and split, sample = episode index.
      ep = episodeAt(loaded().resolve({}, ctx.episodeIndex));
      episodes.set(ctx.episodeKey, ep);
    }
    const s = ep.sample;
    const out: NodeOutputs = { messages: messagesOf(s), sample_id: s.id, sample: s };
    if (s.target !== undefined) out.target = s.target;
    if (s.choices !== undefined) out.choices = s.choices;
    return out;
  }

  return {
    functions: { sample },
    panel: {
      options(field: string, values: PanelValues): Array<string | number> {
        const d = loaded();
        if (field !== 'dataset' && d.names().length === 0) return [];
        switch (field) {
          case 'dataset':
            return d.names();
          case 'split':
            return d.splitsOf(String(values.dataset ?? d.defaultDataset));
          case 'episode': {
            const { dataset, split } = d.resolve({ ...values, episode: 0 });
            return Array.from({ length: d.get(dataset).splits[split]!.length }, (_, i) => i);
          }
          default:
            throw new Error(`unknown env_dataset panel field ${JSON.stringify(field)}; fields: dataset, split, episode`);
        }
      },
      option(field: string, value: string | number, values: PanelValues): string | number | undefined {
        if (field !== 'episode') return this.options(field, values).find((o) => o === value || String(o) === String(value));
        const { dataset, split } = loaded().resolve({ ...values, episode: 0 });
        const index = Number(value);
        const inRange = Number.isInteger(index) && index >= 0 && index < loaded().get(dataset).splits[split]!.length;
        return inRange && String(index) === String(value) ? index : undefined;
      },
      load(values: PanelValues, episodeKey: string): PanelLoadResult {
        const ep = episodeAt(loaded().resolve(values));
        episodes.set(episodeKey, ep);
        return describe(ep);
      },
    },
    evict(episodeKey: string): void {
      episodes.delete(episodeKey);
    },
    async init(): Promise<void> {
      datasets = await LoadedDatasets.read(new DatasetCatalog(workspaceDir ? { workspaceDir } : {}));
    },
  };
}

const envDataset: NodesetModule = {
  ...datasetEnv(),
  // On the eval process's thread every run's host gets its own datasets, read from that run's workspace when it starts.
  async forHost({ dir, manifest, env }) {
    const own = datasetEnv(env.ACTIVE_WORKSPACE_DIR || undefined);
    await own.init?.({ dir, manifest });
    return own;
  },
};

export default envDataset;
