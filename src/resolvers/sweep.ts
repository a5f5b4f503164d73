/**
 * Sweeps: `startSweep` queues the cross product of a grid × seeds as runs grouped under a
 * sweep id, `sweep(id)` is its table (one row per config: each metric's interval and its paired
 * difference against the baseline config, the grid's first point), `cancelSweep` cancels every
 * run of it, `sweeps` lists them.
 */
import { BadInputError, CodedError, NotFoundError } from '../errors.js';
import { gridPoints, MAX_SWEEP_RUNS, pointLabel } from '../compare/sweep-grid.js';
import { sweepTable, type SweepRow } from '../compare/sweep-table.js';
import { isTerminalRunStatus, type RunStatus } from '../statuses.js';
import {
  allocateSweepId,
  assertSweepId,
  listSweepIds,
  readSweep,
  removeSweep,
  writeSweep,
  type SweepConfig,
  type SweepRecord,
} from '../store/sweep-store.js';
import type { MetricAggregate } from '../store/types.js';
import type { SubmitInput } from '../scheduler/types.js';
import type { Overrides } from '../spec/run-spec.js';
import { builder } from './builder.js';
import { MetricComparisonRef, type MetricComparisonSource } from './compare.js';
import type { ApiContext } from './context.js';
import { RunRef, RunStatusRef } from './refs.js';
import { MetricAggregateRef, StartEvalInputRef } from './run.js';
import { loadRun, loadSummary, type RunSource } from './run-source.js';
import { withoutNulls } from './without-nulls.js';

/** Most seeds one sweep takes. */
const MAX_SEEDS = 100;

interface SweepSource {
  sweep: SweepRecord;
  /** Loaded once per request: every run of the sweep. */
  runsPromise?: Promise<RunSource[]>;
  tablePromise?: Promise<{ metrics: string[]; rows: SweepRow[] }>;
}

function sweepRuns(s: SweepSource, ctx: ApiContext): Promise<RunSource[]> {
  s.runsPromise ??= Promise.all(s.sweep.configs.flatMap((c) => c.runIds).map((id) => loadRun(id, ctx)));
  return s.runsPromise;
}

function table(s: SweepSource, ctx: ApiContext): Promise<{ metrics: string[]; rows: SweepRow[] }> {
  s.tablePromise ??= (async () => {
    const runs = await sweepRuns(s, ctx);
    const byId = new Map(runs.map((r) => [r.row.id, r]));
    const rows = await Promise.all(
      s.sweep.configs.map(async (c) => {
        const summaries = await Promise.all(c.runIds.map((id) => loadSummary(byId.get(id)!, ctx)));
        return {
          key: String(c.index),
          records: summaries.flatMap((sum) => sum?.episodes ?? []),
          metricRanges: summaries.find((sum) => sum?.metricRanges)?.metricRanges,
        };
      }),
    );
    return sweepTable(rows);
  })();
  return s.tablePromise;
}

/** The sweep's state from its runs': any run not finished → RUNNING (QUEUED while none started); else the worst ending. */
function sweepStatus(statuses: readonly RunStatus[]): RunStatus {
  if (statuses.length === 0) return 'COMPLETED';
  if (statuses.every((s) => s === 'QUEUED')) return 'QUEUED';
  if (statuses.some((s) => !isTerminalRunStatus(s))) return 'RUNNING';
  for (const s of ['FAILED', 'ABORTED', 'CANCELLED'] as const) if (statuses.includes(s)) return s;
  return 'COMPLETED';
}

interface SweepMetricSource {
  aggregate: MetricAggregate;
  vsBaseline: MetricComparisonSource | null;
}

const SweepMetricRef = builder.objectRef<SweepMetricSource>('SweepMetric').implement({
  description: 'One metric of one sweep config: its aggregate, and its paired difference against the baseline config.',
  fields: (t) => ({
    name: t.string({ description: 'The metric name.', resolve: (m) => m.aggregate.name }),
    aggregate: t.field({
      type: MetricAggregateRef,
      description: "Over the config's episodes, its seed runs pooled: an episode's value is the mean over its seeds.",
      resolve: (m) => m.aggregate,
    }),
    vsBaseline: t.field({
      type: MetricComparisonRef,
      nullable: true,
      description: 'This config − the baseline config, paired by episode; null for the baseline itself and while no episode is shared yet.',
      resolve: (m) => m.vsBaseline,
    }),
  }),
});

interface SweepConfigSource {
  s: SweepSource;
  config: SweepConfig;
}

const SweepConfigRef = builder.objectRef<SweepConfigSource>('SweepConfig').implement({
  description: 'One point of a sweep grid: its runs (one per seed) and its row of the table.',
  fields: (t) => ({
    index: t.int({ description: 'Position in the grid (0 = the baseline config).', resolve: (c) => c.config.index }),
    isBaseline: t.boolean({
      description: 'True for the first grid point, which every other config is compared against.',
      resolve: (c) => c.config.index === 0,
    }),
    point: t.field({ type: 'JSON', description: '"node.key" → value of this config.', resolve: (c) => c.config.point }),
    label: t.string({ description: 'The point in words, e.g. `agent.epsilon=0.1`.', resolve: (c) => pointLabel(c.config.point) }),
    overrides: t.field({ type: 'JSON', description: 'The overrides its runs were given.', resolve: (c) => c.config.overrides }),
    runs: t.field({
      type: [RunRef],
      description: 'Its runs, one per seed, in the order of Sweep.seeds.',
      resolve: async (c, _a, ctx) => {
        const runs = await sweepRuns(c.s, ctx);
        return c.config.runIds.map((id) => runs.find((r) => r.row.id === id)!);
      },
    }),
    metrics: t.field({
      type: [SweepMetricRef],
      description: 'Each metric of the sweep, in the order of Sweep.metrics.',
      resolve: async (c, _a, ctx) => {
        const tbl = await table(c.s, ctx);
        const row = tbl.rows.find((r) => r.key === String(c.config.index))!;
        const baselineRunId = c.s.sweep.configs[0]!.runIds[0]!;
        const candidateRunId = c.config.runIds[0]!;
        return row.aggregates.map((aggregate) => {
          const m = row.vsBaseline.get(aggregate.name);
          return { aggregate, vsBaseline: m ? { m, baselineRunId, candidateRunId } : null };
        });
      },
    }),
  }),
});

const SweepRef = builder.objectRef<SweepSource>('Sweep').implement({
  description: 'A grid of configs × seeds queued as runs over the same episodes, compared in one table.',
  fields: (t) => ({
    id: t.id({ description: 'The sweep id: `sweep_YYYYMMDD_HHMMSS`, with `_1`, `_2` … on collision.', resolve: (s) => s.sweep.id }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was queued.', resolve: (s) => s.sweep.createdAt }),
    cancelledAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When cancelSweep was called, if it was.',
      resolve: (s) => s.sweep.cancelledAt,
    }),
    graphName: t.string({ description: 'The graph every run evaluates.', resolve: (s) => s.sweep.graphName }),
    base: t.field({ type: 'JSON', description: 'The StartEvalInput every run started from.', resolve: (s) => s.sweep.base }),
    grid: t.field({ type: 'JSON', description: '"node.key" → values, as given.', resolve: (s) => s.sweep.grid }),
    seeds: t.field({ type: ['Int'], description: 'The run seeds; each config runs once per seed.', resolve: (s) => s.sweep.seeds }),
    status: t.field({
      type: RunStatusRef,
      description:
        'QUEUED while no run started, RUNNING while any run is unfinished, else FAILED, ABORTED or CANCELLED when any run ended so, else COMPLETED.',
      resolve: async (s, _a, ctx) => sweepStatus((await sweepRuns(s, ctx)).map((r) => r.row.status)),
    }),
    runCount: t.int({
      description: 'Runs in the sweep (configs × seeds).',
      resolve: (s) => s.sweep.configs.reduce((n, c) => n + c.runIds.length, 0),
    }),
    runsFinished: t.int({
      description: 'Runs that reached a terminal state.',
      resolve: async (s, _a, ctx) => (await sweepRuns(s, ctx)).filter((r) => isTerminalRunStatus(r.row.status)).length,
    }),
    runs: t.field({
      type: [RunRef],
      description: 'Every run, config by config, seed by seed.',
      resolve: (s, _a, ctx) => sweepRuns(s, ctx),
    }),
    metrics: t.stringList({
      description: 'The metrics of the table, sorted.',
      resolve: async (s, _a, ctx) => (await table(s, ctx)).metrics,
    }),
    configs: t.field({
      type: [SweepConfigRef],
      description: 'One row per config, the baseline (index 0) first.',
      resolve: (s) => s.sweep.configs.map((config) => ({ s, config })),
    }),
  }),
});

async function loadSweep(id: string, ctx: ApiContext): Promise<SweepSource> {
  assertSweepId(id);
  return { sweep: await readSweep(ctx.outputsDir, id) };
}

function checkSeeds(seeds: readonly number[] | null | undefined, baseSeed: number | undefined): number[] {
  if (seeds && seeds.length === 0) throw new BadInputError("seeds is empty: list at least one seed, or leave it out for the base's");
  const list = seeds ? [...seeds] : [baseSeed ?? 0];
  if (list.length > MAX_SEEDS) throw new BadInputError(`seeds: at most ${MAX_SEEDS}, got ${list.length}`);
  if (new Set(list).size !== list.length) throw new BadInputError('seeds: each seed at most once');
  return list;
}

async function startSweep(
  baseIn: Record<string, unknown>,
  grid: unknown,
  seedsIn: readonly number[] | null | undefined,
  ctx: ApiContext,
): Promise<SweepSource> {
  const base = withoutNulls(baseIn) as SubmitInput;
  if (base.overrides !== undefined && (base.overrides === null || typeof base.overrides !== 'object' || Array.isArray(base.overrides)))
    throw new BadInputError('base.overrides must be an object of node id → config patch');
  const points = gridPoints(grid, (base.overrides ?? {}) as Overrides);
  const seeds = checkSeeds(seedsIn, base.seed);
  const total = points.length * seeds.length;
  if (total > MAX_SWEEP_RUNS)
    throw new BadInputError(
      `the sweep would queue ${total} runs (${points.length} configs × ${seeds.length} seeds); at most ${MAX_SWEEP_RUNS}`,
    );
  // Every config is checked before any run is queued: a refused one (an endpoint or a tool the operator does not allow) queues nothing.
  if (ctx.scheduler.vet) for (const p of points) await ctx.scheduler.vet({ ...base, overrides: p.overrides });
  const id = await allocateSweepId(ctx.outputsDir);
  const sweep: SweepRecord = {
    id,
    createdAt: new Date().toISOString(),
    graphName: base.graphName,
    base: base as unknown as Record<string, unknown>,
    grid: grid as Record<string, unknown[]>,
    seeds,
    configs: points.map((p, index) => ({ index, point: p.point, overrides: p.overrides, runIds: [] })),
    cancelledAt: null,
  };
  const queued: string[] = [];
  try {
    for (const config of sweep.configs) {
      for (const seed of seeds) {
        const summary = await ctx.scheduler.submit({ ...base, overrides: config.overrides, seed, sweepId: id, sweepPoint: config.point });
        config.runIds.push(summary.runId);
        queued.push(summary.runId);
      }
    }
    await writeSweep(ctx.outputsDir, sweep);
  } catch (err) {
    // All or nothing: the runs already queued are cancelled, the sweep file removed.
    await Promise.allSettled(queued.map((runId) => ctx.scheduler.cancel(runId)));
    await removeSweep(ctx.outputsDir, id);
    if (err instanceof NotFoundError) throw new BadInputError(err.message, { cause: err });
    throw err;
  }
  return { sweep };
}

async function cancelSweep(id: string, ctx: ApiContext): Promise<SweepSource> {
  const s = await loadSweep(id, ctx);
  const runIds = s.sweep.configs.flatMap((c) => c.runIds);
  await Promise.all(
    runIds.map(async (runId) => {
      try {
        await ctx.scheduler.cancel(runId);
      } catch (err) {
        // A run that already finished stays as it ended; anything else is a real failure.
        if (!(err instanceof CodedError && err.code === 'CONFLICT')) throw err;
      }
    }),
  );
  if (!s.sweep.cancelledAt) {
    s.sweep.cancelledAt = new Date().toISOString();
    await writeSweep(ctx.outputsDir, s.sweep);
  }
  return { sweep: s.sweep };
}

builder.queryFields((t) => ({
  sweep: t.field({
    type: SweepRef,
    description: 'One sweep by id. NOT_FOUND when there is none; BAD_USER_INPUT for a malformed id.',
    args: { id: t.arg.id({ required: true, description: 'The sweep id.' }) },
    resolve: (_root, args, ctx) => loadSweep(String(args.id), ctx),
  }),
  sweeps: t.field({
    type: [SweepRef],
    description: 'Every sweep, newest first.',
    args: { first: t.arg.int({ defaultValue: 50, description: 'At most this many (1..500).' }) },
    resolve: async (_root, args, ctx) => {
      const first = args.first ?? 50;
      if (!Number.isInteger(first) || first < 1 || first > 500) throw new BadInputError(`first must be an integer in 1..500, got ${first}`);
      const ids = (await listSweepIds(ctx.outputsDir)).slice(0, first);
      const out: SweepSource[] = [];
      for (const id of ids) {
        try {
          out.push(await loadSweep(id, ctx));
        } catch (err) {
          // A sweep file still being written (or not a sweep) is left out of the list.
          if (!(err instanceof NotFoundError)) throw err;
        }
      }
      return out;
    },
  }),
}));

builder.mutationFields((t) => ({
  startSweep: t.field({
    type: SweepRef,
    description:
      'Queues every config of `grid` ("node.key" → values; the cross product, the first point being the baseline) × every seed as runs of `base`, grouped under a new sweep id. All or nothing: when one run is refused, those already queued are cancelled and the error is returned. BAD_USER_INPUT for a bad grid or base; QUEUE_FULL past the queue capacity.',
    args: {
      base: t.arg({
        type: StartEvalInputRef,
        required: true,
        description: 'What every run evaluates (its overrides are the base the grid patches).',
      }),
      grid: t.arg({ type: 'JSON', required: true, description: '"node.key" → [values], e.g. {"agent.epsilon": [0.1, 0.3]}.' }),
      seeds: t.arg.intList({ description: "Run seeds (default: the base's seed); every config runs once per seed." }),
    },
    resolve: (_root, args, ctx) => startSweep(args.base as Record<string, unknown>, args.grid, args.seeds, ctx),
  }),
  cancelSweep: t.field({
    type: SweepRef,
    description:
      'Cancels every queued or running run of the sweep (finished ones stay as they ended). Idempotent. NOT_FOUND for an unknown sweep.',
    args: { id: t.arg.id({ required: true, description: 'The sweep id.' }) },
    resolve: (_root, args, ctx) => cancelSweep(String(args.id), ctx),
  }),
}));
