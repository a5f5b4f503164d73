/**
 * `evalctl datasets [name] [--split S] [--preview N] [--json]`: the datasets (built-ins and the
 * workspace overlay) with their splits and sample counts; with a name, one dataset and a
 * preview of its first samples. A dataset that cannot be read is listed with its error; asked
 * for by name, its error is the command's (exit 2).
 */
import { intFlag, parseCliArgs } from './args.js';
import { DatasetCatalog } from '../datasets/dataset-catalog.js';
import type { Dataset, Sample } from '../datasets/types.js';
import { BadInputError, errorMessage } from '../errors.js';

const USAGE = 'usage: evalctl datasets [name] [--split S] [--preview N] [--json]';
const DEFAULT_PREVIEW = 3;
const TEXT_WIDTH = 100;

function splitsJson(d: Dataset): Array<{ name: string; sampleCount: number; clusters: string[] }> {
  return d.splitNames.map((name) => ({
    name,
    sampleCount: d.splits[name]!.length,
    clusters: [...new Set(d.splits[name]!.flatMap((s) => (s.metadata.cluster === undefined ? [] : [String(s.metadata.cluster)])))].sort(),
  }));
}

function datasetJson(d: Dataset): Record<string, unknown> {
  return {
    name: d.name,
    source: d.source,
    dir: d.dir,
    description: d.description ?? null,
    defaultSplit: d.defaultSplit,
    labels: d.labels ?? null,
    splits: splitsJson(d),
  };
}

const oneLine = (s: string, width = TEXT_WIDTH): string => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
};
const inputText = (s: Sample): string => (typeof s.input === 'string' ? s.input : s.input.map((m) => `[${m.role}] ${m.content}`).join(' '));

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((cell, c) => (c < r.length - 1 ? cell.padEnd(widths[c]!) : cell))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    {
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        split: { type: 'string' },
        preview: { type: 'string' },
      },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (positionals.length > 1) throw new BadInputError(`expected at most one dataset name, got ${positionals.length}; ${USAGE}`);
  const catalog = new DatasetCatalog();
  const name = positionals[0];
  if (name === undefined) {
    if (values.split !== undefined || values.preview !== undefined)
      throw new BadInputError(`--split and --preview need a dataset name; ${USAGE}`);
    return list(catalog, values.json === true);
  }
  const preview = intFlag('preview', values.preview, 0) ?? DEFAULT_PREVIEW;
  const d = await catalog.load(name);
  const split = values.split ?? d.defaultSplit;
  const samples = d.splits[split];
  if (!samples) throw new BadInputError(`dataset ${name} has no split ${JSON.stringify(split)}; splits: ${d.splitNames.join(', ')}`);
  const shown = samples.slice(0, preview);
  if (values.json) {
    process.stdout.write(JSON.stringify({ ...datasetJson(d), preview: { split, samples: shown } }, null, 2) + '\n');
    return 0;
  }
  const out: string[] = [`${d.name} (${d.source}, ${d.dir})`];
  if (d.description) out.push(d.description);
  if (d.labels) out.push(`labels: ${d.labels.join(', ')}`);
  out.push('');
  const rows = [['SPLIT', 'SAMPLES', 'CLUSTERS']];
  for (const s of splitsJson(d))
    rows.push([s.name + (s.name === d.defaultSplit ? ' (default)' : ''), String(s.sampleCount), s.clusters.join(', ')]);
  out.push(table(rows));
  if (shown.length > 0) {
    out.push(`first ${shown.length} of ${split}:`);
    shown.forEach((s, i) => {
      out.push(`  ${i}  ${s.id}: ${oneLine(inputText(s))}`);
      if (s.choices) out.push(`       choices: ${s.choices.map((c, k) => `${String.fromCharCode(65 + k)}. ${c}`).join('  ')}`);
      if (s.target !== undefined) out.push(`       target: ${JSON.stringify(s.target)}`);
    });
  }
  process.stdout.write(out.join('\n') + '\n');
  return 0;
}

async function list(catalog: DatasetCatalog, json: boolean): Promise<number> {
  const entries = catalog.list();
  const loaded = await Promise.all(
    entries.map(async (e) => {
      try {
        return { entry: e, dataset: await catalog.load(e.name) };
      } catch (err) {
        return { entry: e, error: errorMessage(err) };
      }
    }),
  );
  if (json) {
    const body = loaded.map((l) =>
      l.dataset
        ? { ...datasetJson(l.dataset), error: null }
        : { name: l.entry.name, source: l.entry.source, dir: l.entry.dir, error: l.error },
    );
    process.stdout.write(JSON.stringify(body, null, 2) + '\n');
    return 0;
  }
  if (entries.length === 0) {
    process.stdout.write(
      `no datasets in ${[catalog.workspaceDir ? `${catalog.workspaceDir}/datasets` : undefined, catalog.builtinDir].filter(Boolean).join(' or ')}\n`,
    );
    return 0;
  }
  const rows = [['NAME', 'SOURCE', 'SPLITS', 'LABELS', 'DESCRIPTION']];
  for (const l of loaded) {
    if (!l.dataset) {
      rows.push([l.entry.name, l.entry.source, '-', '-', `ERROR: ${l.error}`]);
      continue;
    }
    const d = l.dataset;
    rows.push([
      d.name,
      d.source,
      d.splitNames.map((s) => `${s}:${d.splits[s]!.length}`).join(' '),
      d.labels ? d.labels.join('/') : '-',
      oneLine(d.description ?? '', 60),
    ]);
  }
  process.stdout.write(table(rows));
  return 0;
}
