/**
 * The datasets one env host serves: every dataset folder, read once when the host starts (the
 * host lives as long as its run, so a run sees the files as they were when it started). A
 * dataset that cannot be read is kept as its error, which answers any use of it.
 */
import { DatasetCatalog } from '../../datasets/dataset-catalog.js';
import type { Dataset } from '../../datasets/types.js';
import { BadInputError } from '../../errors.js';

export interface DatasetAddress {
  dataset: string;
  split: string;
  index: number;
}

export class LoadedDatasets {
  readonly #byName = new Map<string, Dataset | Error>();
  readonly defaultDataset: string;

  private constructor(entries: Array<[string, Dataset | Error]>, defaultDataset: string) {
    for (const [k, v] of entries) this.#byName.set(k, v);
    this.defaultDataset = defaultDataset;
  }

  static async read(catalog = new DatasetCatalog(), defaultDataset = 'arith'): Promise<LoadedDatasets> {
    const entries = await Promise.all(
      catalog.list().map(async (e): Promise<[string, Dataset | Error]> => {
        try {
          return [e.name, await catalog.load(e.name)];
        } catch (err) {
          return [e.name, err instanceof Error ? err : new Error(String(err))];
        }
      }),
    );
    return new LoadedDatasets(entries, defaultDataset);
  }

  names(): string[] {
    return [...this.#byName.keys()];
  }

  /** The dataset, or its read error (DATASET_INVALID naming the file and line). */
  get(name: string): Dataset {
    const d = this.#byName.get(name);
    if (d === undefined) throw new BadInputError(`unknown dataset ${JSON.stringify(name)}; known: ${this.names().join(', ') || 'none'}`);
    if (d instanceof Error) throw d;
    return d;
  }

  /** Split names with the dataset's default first (the panel's split field starts on it). */
  splitsOf(name: string): string[] {
    const d = this.get(name);
    return [d.defaultSplit, ...d.splitNames.filter((s) => s !== d.defaultSplit)];
  }

  /** Checks the address; a split or index the dataset lacks is BAD_USER_INPUT naming what it has. */
  resolve(
    values: { dataset?: string | number | undefined; split?: string | number | undefined; episode?: string | number | undefined },
    fallbackIndex = 0,
  ): DatasetAddress {
    const dataset = String(values.dataset ?? this.defaultDataset);
    const d = this.get(dataset);
    const split = String(values.split ?? d.defaultSplit);
    const samples = d.splits[split];
    if (!samples) throw new BadInputError(`dataset ${dataset} has no split ${JSON.stringify(split)}; splits: ${d.splitNames.join(', ')}`);
    const raw = values.episode ?? fallbackIndex;
    const index = typeof raw === 'number' ? raw : Number(raw);
    if (!Number.isInteger(index) || index < 0 || index >= samples.length) {
      throw new BadInputError(`sample ${JSON.stringify(raw)} is out of range: ${dataset}/${split} has samples 0..${samples.length - 1}`);
    }
    return { dataset, split, index };
  }
}
