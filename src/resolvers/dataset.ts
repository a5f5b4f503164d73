/**
 * Datasets: `datasets` and `dataset(name)`, with their splits, sample counts, a preview of the
 * first samples and the label set when targets are labels. A dataset whose files cannot be
 * read is listed with its `error` (naming the file and line) and no splits.
 */
import { DatasetCatalog } from '../datasets/dataset-catalog.js';
import type { DatasetEntry } from '../datasets/dataset-catalog.js';
import type { DatasetIndex, SplitIndex } from '../datasets/dataset-index.js';
import type { Sample } from '../datasets/types.js';
import { BadInputError, errorMessage } from '../errors.js';
import { builder } from './builder.js';
import type { ApiContext, DatasetsApi } from './context.js';

/** The most samples one preview returns. */
export const MAX_PREVIEW = 100;

interface DatasetView {
  entry: DatasetEntry;
  dataset?: DatasetIndex;
  error?: string;
}

interface SplitView {
  dataset: DatasetIndex;
  name: string;
  split: SplitIndex;
}

export const catalogOf = (ctx: ApiContext): DatasetsApi => ctx.datasets ?? new DatasetCatalog();

async function view(catalog: DatasetsApi, entry: DatasetEntry): Promise<DatasetView> {
  try {
    // Read off the request path (a worker thread) and kept as an index: a large dataset neither stalls the server nor stays in its memory.
    return { entry, dataset: await catalog.index(entry.name) };
  } catch (err) {
    return { entry, error: errorMessage(err) };
  }
}

const DatasetSampleRef = builder.objectRef<Sample>('DatasetSample').implement({
  description: 'One sample: what the agent gets and the answer it is scored against.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Stable id within its split (from a hash of its content when the file gives none).' }),
    input: t.field({ type: 'JSON', description: 'A string, or a list of chat messages `{ role, content }`.', resolve: (s) => s.input }),
    target: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The expected answer: a string, a list of acceptable strings, a number or a label; null when it has none.',
      resolve: (s) => s.target ?? null,
    }),
    choices: t.stringList({ nullable: true, description: 'The choices of a multiple-choice sample.', resolve: (s) => s.choices ?? null }),
    metadata: t.field({ type: 'JSON', description: 'Free metadata; `cluster` names its group.', resolve: (s) => s.metadata }),
    cluster: t.string({
      nullable: true,
      description: 'Its group (`metadata.cluster`), if any.',
      resolve: (s) => (s.metadata.cluster === undefined ? null : String(s.metadata.cluster)),
    }),
  }),
});

const DatasetSplitRef = builder.objectRef<SplitView>('DatasetSplit').implement({
  description: 'A split of a dataset (a file, or a `split` field): its samples in fixed order.',
  fields: (t) => ({
    name: t.string({ description: 'The split name, e.g. `test`.', resolve: (s) => s.name }),
    sampleCount: t.int({ description: 'How many samples it has (episodes 0..sampleCount-1).', resolve: (s) => s.split.sampleCount }),
    clusters: t.stringList({
      description: 'The distinct `metadata.cluster` values of its samples, sorted.',
      resolve: (s) => s.split.clusters,
    }),
    preview: t.field({
      type: [DatasetSampleRef],
      description: `Its first samples, in episode order (at most ${MAX_PREVIEW}).`,
      args: {
        first: t.arg.int({ defaultValue: 5, description: `How many (0..${MAX_PREVIEW}).` }),
        offset: t.arg.int({ defaultValue: 0, description: 'The episode index to start at.' }),
      },
      resolve: (s, args, ctx) => {
        const first = args.first ?? 5;
        const offset = args.offset ?? 0;
        if (first < 0 || first > MAX_PREVIEW) throw new BadInputError(`first must be 0..${MAX_PREVIEW}, got ${first}`);
        if (offset < 0) throw new BadInputError(`offset must be ≥ 0, got ${offset}`);
        return catalogOf(ctx).samples(s.dataset.name, s.name, offset, first, ctx.signal);
      },
    }),
  }),
});

const DatasetRef = builder.objectRef<DatasetView>('Dataset').implement({
  description: 'A folder of samples under `datasets/` (built-in) or `<workspace>/datasets/`; the env_dataset env plays it.',
  fields: (t) => ({
    name: t.string({ description: 'Its name (the folder name); runs select it with `dataset`.', resolve: (d) => d.entry.name }),
    source: t.string({
      description: '`builtin` or `workspace` (a workspace folder hides a built-in one).',
      resolve: (d) => d.entry.source,
    }),
    description: t.string({ nullable: true, description: 'From its dataset.json.', resolve: (d) => d.dataset?.description ?? null }),
    error: t.string({
      nullable: true,
      description: 'Why its files cannot be read (naming the file, line and field); null when they can.',
      resolve: (d) => d.error ?? null,
    }),
    defaultSplit: t.string({
      nullable: true,
      description: 'The split a run uses when it names none.',
      resolve: (d) => d.dataset?.defaultSplit ?? null,
    }),
    sampleCount: t.int({
      description: 'Samples in all splits.',
      resolve: (d) => Object.values(d.dataset?.splits ?? {}).reduce((n, s) => n + s.sampleCount, 0),
    }),
    splits: t.field({
      type: [DatasetSplitRef],
      description: 'Its splits, in the order they were read.',
      resolve: (d) =>
        d.dataset ? d.dataset.splitNames.map((name) => ({ dataset: d.dataset!, name, split: d.dataset!.splits[name]! })) : [],
    }),
    split: t.field({
      type: DatasetSplitRef,
      nullable: true,
      description: 'One split by name (null when it has none of that name).',
      args: { name: t.arg.string({ required: true }) },
      resolve: (d, args) => {
        const split = d.dataset?.splits[args.name];
        return split ? { dataset: d.dataset!, name: args.name, split } : null;
      },
    }),
    labels: t.stringList({
      nullable: true,
      description: 'The label set when targets are labels (in its declared order); null otherwise.',
      resolve: (d) => d.dataset?.labels ?? null,
    }),
  }),
});

builder.queryFields((t) => ({
  datasets: t.field({
    type: [DatasetRef],
    description: 'Every dataset (built-in and workspace), sorted by name.',
    resolve: async (_root, _args, ctx) => {
      const catalog = catalogOf(ctx);
      return Promise.all(catalog.list().map((e) => view(catalog, e)));
    },
  }),
  dataset: t.field({
    type: DatasetRef,
    nullable: true,
    description: 'One dataset by name. NOT_FOUND when there is none.',
    args: { name: t.arg.string({ required: true, description: "The dataset's name." }) },
    resolve: async (_root, args, ctx) => {
      const catalog = catalogOf(ctx);
      return view(catalog, catalog.entry(args.name));
    },
  }),
}));
