/**
 * What tells runs apart: the `Run` fields name, tags, note and spec, and the `updateRun`
 * mutation that edits the labels (written to the run dir's labels.json; spec.json is never rewritten).
 */
import { parseRunLabels, type RunLabels } from '../spec/run-labels.js';
import { readRunLabels, writeRunLabels } from '../store/labels-file.js';
import { describeStorage, StorageError, storageCodeOf } from '../store/storage-fault.js';
import { builder } from './builder.js';
import type { ApiContext } from './context.js';
import { RunRef } from './refs.js';
import { assertRunExists } from './run.js';
import { loadRun, loadSpec, type RunSource } from './run-source.js';

/** The run's labels: the catalog's copy when it has one, else read from the run dir. */
function loadLabels(src: RunSource, ctx: ApiContext): Promise<RunLabels> {
  const known = ctx.catalog.getRun(src.row.id)?.labels;
  return known ? Promise.resolve(known) : readRunLabels(ctx.runs.runDir(src.row.id));
}

builder.objectFields(RunRef, (t) => ({
  name: t.string({
    nullable: true,
    description: 'A short human name given at start or edited since (updateRun); null when it has none.',
    resolve: async (r, _a, ctx) => (await loadLabels(r, ctx)).name ?? null,
  }),
  tags: t.stringList({
    description: 'Free-form tags, in the order given (no repeats); filter runs by one with `runs(tag:)`.',
    resolve: async (r, _a, ctx) => (await loadLabels(r, ctx)).tags,
  }),
  note: t.string({
    nullable: true,
    description: 'Free text about the run (why it was started, what to look at); null when it has none.',
    resolve: async (r, _a, ctx) => (await loadLabels(r, ctx)).note ?? null,
  }),
  spec: t.field({
    type: 'JSON',
    nullable: true,
    description:
      'The run spec as submitted (spec.json): every field with its default filled in. The frozen graph (`graph`) only with withGraph: true. Labels edited since are in name/tags/note, not here. Null when spec.json is missing.',
    args: { withGraph: t.arg.boolean({ defaultValue: false, description: 'Include the frozen graph the run evaluates.' }) },
    resolve: async (r, args, ctx) => {
      const spec = await loadSpec(r, ctx);
      if (!spec) return null;
      if (args.withGraph) return spec;
      const { graph: _graph, ...rest } = spec;
      return rest;
    },
  }),
}));

/** Edits of one run's labels go one after another, so two edits never interleave their read and write. */
const pending = new Map<string, Promise<unknown>>();

function serially<T>(runId: string, fn: () => Promise<T>): Promise<T> {
  const prev = pending.get(runId) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  const done = next.catch(() => {});
  pending.set(runId, done);
  void done.then(() => {
    if (pending.get(runId) === done) pending.delete(runId);
  });
  return next;
}

builder.mutationFields((t) => ({
  updateRun: t.field({
    type: RunRef,
    description:
      "Edits a run's name, tags and note, in any state. An argument left out keeps its value; null (or a blank name or note, or an empty tag list) clears it. BAD_USER_INPUT for a label past its limit; NOT_FOUND for an unknown run; STORAGE_FULL or STORAGE_READ_ONLY when the run dir cannot be written.",
    args: {
      id: t.arg.id({ required: true, description: 'The run id.' }),
      name: t.arg.string({ description: 'A short human name, at most 200 characters.' }),
      tags: t.arg.stringList({ description: 'The whole tag list (replaces the old one): at most 32 tags of 64 characters.' }),
      note: t.arg.string({ description: 'Free text, at most 10000 characters.' }),
    },
    resolve: async (_root, args, ctx) => {
      const runId = String(args.id);
      await assertRunExists(runId, ctx);
      const runDir = ctx.runs.runDir(runId);
      await serially(runId, async () => {
        const current = ctx.catalog.getRun(runId)?.labels ?? (await readRunLabels(runDir));
        const next = parseRunLabels({
          name: args.name === undefined ? current.name : (args.name ?? undefined),
          tags: args.tags === undefined ? current.tags : (args.tags ?? []),
          note: args.note === undefined ? current.note : (args.note ?? undefined),
        });
        try {
          await writeRunLabels(runDir, next);
        } catch (err) {
          const code = storageCodeOf(err, runDir);
          if (code === null) throw err;
          throw new StorageError(code, `cannot edit run ${runId}: ${describeStorage(code, runDir)}`, { cause: err });
        }
        ctx.catalog.setLabels(runId, next);
      });
      return loadRun(runId, ctx);
    },
  }),
}));
