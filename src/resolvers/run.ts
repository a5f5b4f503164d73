/**
 * Runs: the `Run` type, `runs` and `run(id)`, `startEval` and `cancelRun`, and the
 * `runProgress` subscription (the run's state now, then every newer summary, ending after the
 * terminal one).
 */
import { FixedBuffer, Repeater } from 'graphql-yoga';
import { BadInputError, NotFoundError } from '../errors.js';
import { EPISODE_STATUSES, isTerminalRunStatus, type EpisodeStatus, type RunStatus } from '../statuses.js';
import { assertRunId } from '../store/run-dir.js';
import type { RunWatcher } from '../store/run-watcher.js';
import type { MetricAggregate, RetiredWorker, RunSummary } from '../store/types.js';
import { checkWaitForRoom, MAX_WAIT_FOR_ROOM_SEC, submitWhenRoom } from '../scheduler/submit-when-room.js';
import type { SubmitInput } from '../scheduler/types.js';
import { DEFAULT_SHARD_SIZE, PER_CALL_TIMEOUT_STEPS, RUN_DEFAULTS as D, RUN_LIMITS as L } from '../spec/run-spec.js';
import { builder } from './builder.js';
import { EPISODES_PAGE, RUNS_PAGE, checkPage } from './paging.js';
import { EpisodeRef, EpisodeStatusRef, RunRef, RunStatusRef, type EpisodeSource } from './refs.js';
import { loadHead, loadRun, loadSpec, loadSummary, sourceFromRow, sourceFromSummary, type RunSource } from './run-source.js';
import { withoutNulls } from './without-nulls.js';
import { StopWhenInputRef, stopWhenOfInput } from './stop-when.js';
import { CiMethodRef, MetricGoalRef } from './stats-refs.js';
import { orderAggregates } from '../compare/metric-order.js';
import { ci95Of as intervalOf } from '../store/aggregate.js';
import { repeatsAdvice } from '../stats/variance-components.js';
import { readRunModels } from '../store/report.js';
import type { RunModel } from '../store/run-models.js';

export const MetricAggregateRef = builder.objectRef<MetricAggregate>('MetricAggregate').implement({
  description: "One metric over a run's episodes (those that reported it), folded in episode-index order.",
  fields: (t) => ({
    name: t.exposeString('name', { description: "The metric's name, e.g. `success`, `spl`, `return`." }),
    mean: t.float({
      nullable: true,
      description: 'Mean over the episodes that reported it; null when it could not be computed (never 0 in its place).',
      resolve: (m) => finite(m.mean),
    }),
    count: t.exposeInt('count', { description: 'How many episodes reported it.' }),
    stderr: t.float({
      description:
        'Standard error of the mean (sample standard deviation / √count), as if episodes were independent; null below two episodes. Where ciMethod is clustered, clusteredStderr is the one the interval was built from.',
      nullable: true,
      resolve: (m) => (m.count < 2 ? null : finite(m.stderr)),
    }),
    min: t.float({ nullable: true, description: 'Smallest value; null when the summary holds none.', resolve: (m) => finite(m.min) }),
    max: t.float({ nullable: true, description: 'Largest value; null when the summary holds none.', resolve: (m) => finite(m.max) }),
    ci95Low: t.float({
      description:
        'Lower end of the 95 % confidence interval of the mean (ciMethod says how); null below two episodes. Summaries written before intervals existed get the t interval from mean and stderr.',
      nullable: true,
      resolve: (m) => intervalOf(m)?.[0] ?? null,
    }),
    ci95High: t.float({
      description: 'Upper end of the 95 % confidence interval of the mean; null below two episodes.',
      nullable: true,
      resolve: (m) => intervalOf(m)?.[1] ?? null,
    }),
    ciMethod: t.field({
      type: CiMethodRef,
      nullable: true,
      description: 'How the interval was computed; null when there is none.',
      resolve: (m) => (intervalOf(m) ? (m.ciMethod ?? 't') : null),
    }),
    binary: t.boolean({
      description:
        "True when every value was 0 or 1 and the metric's declared range allows a rate: its interval is Wilson (CLUSTERED_LOGIT_T when episodes carry clusters, inside (0, 1) by construction, but Wilson over the clusters at 0 % or 100 %).",
      resolve: (m) => m.binary ?? false,
    }),
    clusters: t.int({
      nullable: true,
      description:
        'Distinct clusters among the counted episodes when episodes carry one (e.g. a dataset sample’s metadata.cluster); null otherwise.',
      resolve: (m) => m.clusters ?? null,
    }),
    clusteredStderr: t.float({
      nullable: true,
      description:
        'Cluster-robust standard error sqrt(C/(C−1)·Σ_c(Σ_{i∈c}(s_i−s̄))²)/n, used with C−1 degrees of freedom; null without clusters. Where the interval is clustered, this (not stderr, which stays sd/√n) is the standard error to show beside it.',
      resolve: (m) => (m.clusteredStderr === undefined ? null : finite(m.clusteredStderr)),
    }),
    repeats: t.float({
      nullable: true,
      description:
        'On a run with repeats: the mean plays per episode behind this metric. Each episode then scores the mean of its plays, and count, mean, stderr and the interval are over episodes. Null without repeats.',
      resolve: (m) => (m.repeats === undefined ? null : finite(m.repeats)),
    }),
    betweenVar: t.float({
      nullable: true,
      description:
        'On a run with repeats: the variance between episodes’ true scores (σ²_between, one-way random effects, clipped at 0); null without repeats or below two episodes.',
      resolve: (m) => (m.betweenVar === undefined ? null : finite(m.betweenVar)),
    }),
    withinVar: t.float({
      nullable: true,
      description: 'On a run with repeats: the pooled variance of an episode’s plays around its mean (σ²_within); null without repeats.',
      resolve: (m) => (m.withinVar === undefined ? null : finite(m.withinVar)),
    }),
    repeatsAdvice: t.string({
      nullable: true,
      description:
        'On a run with repeats: whether more episodes or more repeats shrink the interval faster, from Var(mean) = σ²_between/n + σ²_within/(n·K), with the factor each doubling gives the standard error.',
      resolve: (m) =>
        m.repeats === undefined ? null : repeatsAdvice({ repeats: m.repeats, between: m.betweenVar ?? null, within: m.withinVar ?? null }),
    }),
    excluded: t.field({
      type: [StatusCountRef],
      description:
        'Finished episodes left out of this metric, by ending: CANCELLED and INFRA_ERROR episodes are left out of the means (partial results of every other ending count; every rate is in the run’s statusCounts), and so is an episode that did not report a metric that declares no missing value (a measurement such as latency). Only endings with a count are listed.',
      resolve: (m) => statusCounts(m.excluded),
    }),
    goal: t.field({
      type: MetricGoalRef,
      nullable: true,
      description: 'Which way the metric is better, as its nodeset or graph declares; null when undeclared.',
      resolve: (m) => m.goal ?? null,
    }),
    primary: t.boolean({ description: "True for the run's primary metric (listed first).", resolve: (m) => m.primary ?? false }),
    imputed: t.field({
      type: [StatusCountRef],
      description:
        'Counted episodes that never produced this metric and scored its declared missing value instead (imputedValue: a scorer’s 0, so an unanswered sample counts as wrong), by ending. They are in count and mean. Only endings with a count are listed.',
      resolve: (m) => statusCounts(m.imputed),
    }),
    imputedValue: t.float({
      nullable: true,
      description: 'The declared missing value the imputed episodes scored; null when none did.',
      resolve: (m) => (m.imputedValue === undefined ? null : finite(m.imputedValue)),
    }),
  }),
});

const finite = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

const statusCounts = (counts: Readonly<Record<string, number>> | undefined): StatusCount[] =>
  Object.keys(counts ?? {})
    .sort()
    .map((status) => ({ status: status as EpisodeStatus, count: counts![status]! }));

interface TaskAggregate {
  task: string;
  metrics: MetricAggregate[];
}

const TaskAggregateRef = builder.objectRef<TaskAggregate>('TaskAggregate').implement({
  description:
    'The aggregates of the episodes of one task. When some episodes of a run have a task and others none, those without are grouped under the task "default"; a run with no task at all has no groups.',
  fields: (t) => ({
    task: t.exposeString('task', { description: 'The task name the env reported.' }),
    metrics: t.field({ type: [MetricAggregateRef], description: "Each metric over this task's episodes.", resolve: (a) => a.metrics }),
  }),
});

interface StatusCount {
  status: EpisodeStatus;
  count: number;
}

const StatusCountRef = builder.objectRef<StatusCount>('StatusCount').implement({
  description: "How many of a run's finished episodes ended one way.",
  fields: (t) => ({
    status: t.field({ type: EpisodeStatusRef, description: 'The ending.', resolve: (c) => c.status }),
    count: t.exposeInt('count', { description: 'Episodes that ended so (0 included, so every ending is listed).' }),
  }),
});

const RunErrorRef = builder.objectRef<{ code: string; message: string }>('RunError').implement({
  description: 'Why a run failed or was aborted.',
  fields: (t) => ({
    code: t.exposeString('code', {
      description:
        'Machine-readable cause, e.g. GRAPH_INVALID, OUT_OF_BUDGET, ABORTED, or a storage fault: STORAGE_FULL, STORAGE_READ_ONLY, RUN_DIR_MISSING.',
    }),
    message: t.exposeString('message', { description: 'What happened, in words.' }),
  }),
});

const ReportedModelRef = builder.objectRef<RunModel['reported'][number]>('ReportedModel').implement({
  description: "A model a provider named in its answers to a node's calls, with how many answers did.",
  fields: (t) => ({
    model: t.exposeString('model', { description: 'The model the answer named (an alias may resolve to a dated snapshot).' }),
    systemFingerprint: t.string({
      nullable: true,
      description: "The provider's system_fingerprint; null when it sent none.",
      resolve: (r) => r.systemFingerprint ?? null,
    }),
    calls: t.exposeInt('calls', { description: 'Answers with this model and fingerprint, cache hits included.' }),
  }),
});

const RunModelRef = builder.objectRef<RunModel>('RunModel').implement({
  description:
    'What a model-backed node of the run asks, resolved from its config and the environment at submit and frozen with the graph, beside what the provider said answered.',
  fields: (t) => ({
    node: t.exposeString('node', { description: "The node's id." }),
    type: t.exposeString('type', { description: 'Its type, e.g. llm__chat.' }),
    model: t.exposeString('model', { description: 'The model name sent.' }),
    baseUrl: t.exposeString('baseUrl', { description: "The endpoint's base URL (never a key or password)." }),
    sampling: t.field({
      type: 'JSON',
      description:
        "Each sampling parameter that has a value (temperature, top_p, max_tokens, seed), by config key; unset ones are the endpoint's defaults.",
      resolve: (m) => m.sampling,
    }),
    reported: t.field({
      type: [ReportedModelRef],
      description: 'What the provider said answered, counted when the run (or its latest attempt) ended; empty before.',
      resolve: (m) => m.reported,
    }),
    repeatsNote: t.string({
      nullable: true,
      description:
        "On a run with repeats: whether each repeat asks the model again (temperature > 0: the repeat is part of the cache key) or gets the first repeat's answer (temperature 0 with the cache on: a warning).",
      resolve: (m) => m.repeatsNote ?? null,
    }),
  }),
});

const RetiredWorkerRef = builder.objectRef<RetiredWorker>('RetiredWorker').implement({
  description: 'A worker that stopped early because its env host could not be started (again); the other workers played its episodes.',
  fields: (t) => ({
    workerId: t.exposeInt('workerId', { description: 'The worker (0-based).' }),
    reason: t.exposeString('reason', { description: 'Which host start failed, and its error.' }),
  }),
});

interface EpisodePage {
  items: EpisodeSource[];
  total: number;
}

export const EpisodePageRef = builder.objectRef<EpisodePage>('EpisodePage').implement({
  description: "A page of a run's finished episodes in index order.",
  fields: (t) => ({
    items: t.field({ type: [EpisodeRef], description: 'The episodes on this page.', resolve: (p) => p.items }),
    total: t.exposeInt('total', { description: 'Finished episodes matching the filter, on all pages.' }),
  }),
});

RunRef.implement({
  description: 'One batch evaluation of a graph over many episodes.',
  fields: (t) => ({
    id: t.id({ description: 'The run id: `YYYYMMDD_HHMMSS`, with `_1`, `_2` … on collision.', resolve: (r) => r.row.id }),
    status: t.field({ type: RunStatusRef, description: 'Where the run is in its lifecycle.', resolve: (r) => r.row.status }),
    graphName: t.string({ description: 'The graph evaluated (frozen into the run dir at start).', resolve: (r) => r.row.graphName }),
    episodeCount: t.int({
      description: 'Plays asked for: the episodes × repeats (the records the run will have; episodes without repeats).',
      resolve: (r) => r.row.episodeCount,
    }),
    repeats: t.int({
      description: 'Plays of each episode, each with its own derived seed; 1 without repeats.',
      resolve: async (r, _a, ctx) => (await loadHead(r, ctx))?.repeats ?? (await loadSpec(r, ctx))?.repeats ?? 1,
    }),
    workerCount: t.int({ description: 'Parallel workers; changes the speed, never the results.', resolve: (r) => r.row.workerCount }),
    models: t.field({
      type: [RunModelRef],
      description:
        'Each model-backed node: the model, endpoint and sampling frozen at submit, and what the provider reported answering. Empty for a graph without a model, or a run recorded before models were.',
      resolve: (r, _a, ctx) => readRunModels(ctx.runs.runDir(r.row.id)),
    }),
    episodesDone: t.int({ description: 'Episodes finished so far, whatever their ending.', resolve: (r) => r.row.episodesDone }),
    progress: t.float({
      description: 'episodesDone / episodeCount, from 0 to 1.',
      resolve: (r) => (r.row.episodeCount > 0 ? Math.min(1, r.row.episodesDone / r.row.episodeCount) : 0),
    }),
    priority: t.int({ description: 'Admission priority; higher runs first.', resolve: (r) => r.row.priority }),
    // Float: a run started by evalctl or a run file may carry any safe integer, past GraphQL's 32-bit Int.
    seed: t.float({
      description: "The run seed, a safe integer; each episode's seed derives from it and the episode index.",
      resolve: async (r, _a, ctx) => (await loadHead(r, ctx))?.seed ?? (await loadSpec(r, ctx))?.seed ?? D.seed,
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When the run was submitted.', resolve: (r) => r.row.createdAt }),
    startedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When its first episode could start.',
      resolve: (r) => r.row.startedAt,
    }),
    finishedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it reached its terminal state.',
      resolve: (r) => r.row.finishedAt,
    }),
    error: t.field({ type: RunErrorRef, nullable: true, description: 'Why it failed or was aborted.', resolve: (r) => r.row.error }),
    summaryModified: t.boolean({
      description:
        "True when the run's summary.json was changed after the run finished (it no longer matches the digest recorded at the finish): it is not believed, and the run shows the state recorded at its finish (status, times, error) with the episode records on disk and their aggregates.",
      resolve: (r) => r.row.summaryModified === true,
    }),
    aggregateMetrics: t.field({
      type: [MetricAggregateRef],
      description:
        'Each metric over the finished episodes (mean, count, stderr, min, max): the primary metric first, then those with a declared goal, then the rest, each by name.',
      resolve: (r) => orderAggregates(r.row.aggregateMetrics),
    }),
    aggregateByTask: t.field({
      type: [TaskAggregateRef],
      description: 'The same aggregates per task, sorted by task name.',
      resolve: async (r, _a, ctx) => {
        const byTask = (await loadHead(r, ctx))?.aggregateByTask ?? {};
        return Object.keys(byTask)
          .sort()
          .map((task) => ({ task, metrics: orderAggregates(byTask[task] ?? []) }));
      },
    }),
    statusCounts: t.field({
      type: [StatusCountRef],
      description: 'Finished episodes by ending, one entry per ending.',
      resolve: (r) => EPISODE_STATUSES.map((status) => ({ status, count: r.row.statusCounts[status] ?? 0 })),
    }),
    timedOut: t.boolean({
      description: 'True when an episode ended TIMEOUT: the one result that can depend on machine speed.',
      resolve: async (r, _a, ctx) => (await loadHead(r, ctx))?.timedOut ?? false,
    }),
    retiredWorkers: t.field({
      type: [RetiredWorkerRef],
      description:
        'Workers that retired during the run (their env host would not start); empty when none did. Results are unchanged (the others played their episodes); only speed was lost.',
      resolve: async (r, _a, ctx) => (await loadHead(r, ctx))?.retiredWorkers ?? [],
    }),
    viaSubprocess: t.boolean({
      description: 'True when the run executes in its own eval process (the default); false for the in-process path.',
      resolve: async (r, _a, ctx) => {
        const spec = await loadSpec(r, ctx);
        return spec?.viaSubprocess ?? r.row.viaSubprocess;
      },
    }),
    cancelRequested: t.boolean({
      description:
        'True while a RUNNING run is stopping after cancelRun (its in-flight episodes end CANCELLED, then the run does); false otherwise.',
      resolve: (r, _a, ctx) =>
        r.row.status === 'RUNNING' && ctx.scheduler.activeJobs().some((j) => j.runId === r.row.id && j.cancelRequested),
    }),
    pid: t.int({
      nullable: true,
      description: 'The eval process id while it runs.',
      resolve: (r) => (r.row.status === 'RUNNING' ? r.row.pid : null),
    }),
    seq: t.int({
      description:
        "The server's number for this state of the run: each state runProgress delivers has a higher one than the last, so of two states the higher seq is the newer. A query answers the seq of the newest state delivered (0 before any). Kept by the server, not the run directory: it starts over when the server restarts.",
      resolve: (r, _a, ctx) => r.seq ?? ctx.watcher.seqOf(r.row.id),
    }),
    stepBudget: t.int({
      nullable: true,
      description: "The step budget override given at start, if any (else the env's or the graph's applies per episode).",
      resolve: async (r, _a, ctx) => (await loadSpec(r, ctx))?.stepBudget ?? null,
    }),
    overrides: t.field({
      type: 'JSON',
      description: 'Config patches given at start: node id → patch.',
      resolve: async (r, _a, ctx) => (await loadSpec(r, ctx))?.overrides ?? {},
    }),
    codeTools: t.stringList({
      description:
        'The code-running tools (the python built-in, command tools) its graph offers, as "node.tool": they run code with the server\'s rights, allowed by its operator (`evalctl serve --allow-code-tools`). Empty for none.',
      resolve: async (r, _a, ctx) => (await loadSpec(r, ctx))?.codeTools ?? [],
    }),
    dataset: t.string({
      nullable: true,
      description: 'Env panel dataset, if given.',
      resolve: async (r, _a, ctx) => (await loadSpec(r, ctx))?.dataset ?? null,
    }),
    split: t.string({
      nullable: true,
      description: 'Env panel split, if given.',
      resolve: async (r, _a, ctx) => (await loadSpec(r, ctx))?.split ?? null,
    }),
    episodeOffset: t.int({
      description: "Index of the env episode the run's first episode plays.",
      resolve: async (r, _a, ctx) => (await loadSpec(r, ctx))?.episodeOffset ?? D.episodeOffset,
    }),
    sweepId: t.string({
      nullable: true,
      description: 'The sweep that queued this run (see `sweep`), if any.',
      resolve: async (r, _a, ctx) => (await loadSpec(r, ctx))?.sweepId ?? null,
    }),
    sweepPoint: t.field({
      type: 'JSON',
      nullable: true,
      description: 'Its point of the sweep grid ("node.key" → value), if a sweep queued it.',
      resolve: async (r, _a, ctx) => (await loadSpec(r, ctx))?.sweepPoint ?? null,
    }),
    exclusiveGpu: t.boolean({
      description: 'True when nothing else may run beside it.',
      resolve: async (r, _a, ctx) => (await loadSpec(r, ctx))?.exclusiveGpu ?? D.exclusiveGpu,
    }),
    episodes: t.field({
      type: EpisodePageRef,
      description: 'Finished episodes in index order, filtered by ending and paged.',
      args: {
        status: t.arg({ type: EpisodeStatusRef, description: 'Only episodes that ended so.' }),
        offset: t.arg.int({ defaultValue: 0, description: 'Episodes to skip.' }),
        first: t.arg.int({ defaultValue: EPISODES_PAGE.first, description: `Page size, at most ${EPISODES_PAGE.max}.` }),
      },
      resolve: async (r, args, ctx) => {
        const page = checkPage('episodes', args.offset, args.first, EPISODES_PAGE);
        // A run read from disk: the page through records.jsonl's index, whatever the run's size.
        if (!r.summary || r.recordsInFile) {
          const fromFile = await ctx.runs.readEpisodePage(r.row.id, page.offset, page.first, args.status ?? undefined);
          if (fromFile) return { total: fromFile.total, items: fromFile.items.map((record) => ({ runId: r.row.id, record })) };
        }
        const all = (await loadSummary(r, ctx))?.episodes ?? [];
        const matching = args.status ? all.filter((e) => e.status === args.status) : all;
        const sorted = [...matching].sort((a, b) => a.index - b.index);
        return {
          total: sorted.length,
          items: sorted.slice(page.offset, page.offset + page.first).map((record) => ({ runId: r.row.id, record })),
        };
      },
    }),
    episode: t.field({
      type: EpisodeRef,
      nullable: true,
      description: 'One finished episode by index (null while it has not finished).',
      args: { index: t.arg.int({ required: true, description: 'The episode index.' }) },
      resolve: async (r, args, ctx) => {
        if (args.index < 0) throw new BadInputError(`episode index must be ≥ 0, got ${args.index}`);
        if (!r.summary || r.recordsInFile) {
          const record = await ctx.runs.readEpisode(r.row.id, args.index);
          if (record) return { runId: r.row.id, record };
        }
        const inSummary = (await loadSummary(r, ctx))?.episodes.find((e) => e.index === args.index);
        const record = inSummary ?? (await ctx.runs.readEpisode(r.row.id, args.index));
        return record ? { runId: r.row.id, record } : null;
      },
    }),
  }),
});

interface RunPage {
  items: RunSource[];
  total: number;
}

const RunPageRef = builder.objectRef<RunPage>('RunPage').implement({
  description: 'A page of runs, newest first.',
  fields: (t) => ({
    items: t.field({ type: [RunRef], description: 'The runs on this page.', resolve: (p) => p.items }),
    total: t.exposeInt('total', { description: 'Runs matching the filter, on all pages.' }),
  }),
});

builder.queryFields((t) => ({
  runs: t.field({
    type: RunPageRef,
    description: 'Runs newest first, filtered by status, graph, tag and text, paged.',
    args: {
      status: t.arg({ type: RunStatusRef, description: 'Only runs in this state.' }),
      graphName: t.arg.string({ description: 'Only runs of this graph.' }),
      tag: t.arg.string({ description: 'Only runs carrying this tag.' }),
      search: t.arg.string({ description: 'Only runs whose id, graph, name, tags or note contain this text (case-insensitive).' }),
      offset: t.arg.int({ defaultValue: 0, description: 'Runs to skip.' }),
      first: t.arg.int({ defaultValue: RUNS_PAGE.first, description: `Page size, at most ${RUNS_PAGE.max}.` }),
    },
    resolve: (_root, args, ctx) => {
      const page = checkPage('runs', args.offset, args.first, RUNS_PAGE);
      const filter = {
        ...(args.status ? { status: args.status } : {}),
        ...(args.graphName ? { graphName: args.graphName } : {}),
        ...(args.tag ? { tag: args.tag } : {}),
        ...(args.search?.trim() ? { search: args.search } : {}),
      };
      return {
        total: ctx.catalog.countRuns(filter),
        items: ctx.catalog.listRuns({ ...filter, ...page }).map(sourceFromRow),
      };
    },
  }),
  run: t.field({
    type: RunRef,
    nullable: true,
    description: 'One run by id. NOT_FOUND when no such run exists; BAD_USER_INPUT for a malformed id.',
    args: { id: t.arg.id({ required: true, description: 'The run id.' }) },
    resolve: (_root, args, ctx) => loadRun(String(args.id), ctx),
  }),
}));

export const StartEvalInputRef = builder.inputType('StartEvalInput', {
  description:
    'What to evaluate. Only graphName and episodeCount are required. Defaults and limits are those of the run spec (docs/graphql.md).',
  fields: (t) => ({
    graphName: t.string({ required: true, description: `A saved graph (see \`graphs\`), at most ${L.maxNameChars} characters.` }),
    episodeCount: t.int({ required: true, description: `Episodes to run, 1..${L.maxEpisodes}.` }),
    workerCount: t.int({
      defaultValue: D.workerCount,
      description: `Parallel workers (each with its own env host), 1..${L.maxWorkers}; a speed dial, never a result dial.`,
    }),
    maxInFlight: t.int({
      description: `Episodes in flight at once across the run, workerCount..${L.maxInFlight}: where every node awaits I/O (a model call) each worker plays its share at once; a replicated env plays one per worker. A speed dial, never a result dial. Default: from the graph's placement (Run.concurrency says what it came to and what bounds it).`,
    }),
    seed: t.int({
      defaultValue: D.seed,
      description:
        "Run seed, a 32-bit integer here (evalctl and run files take any safe integer); each episode's seed derives from it and the episode index.",
    }),
    stepBudget: t.int({ description: "Steps per episode, overriding the env's and the graph's budget. At least 1." }),
    perStepTimeoutSec: t.float({
      description: `Wall-clock seconds allowed per step, above 0 and at most ${L.maxPerStepTimeoutSec}; an episode times out after budget × this. Default: the graph's per_step_timeout_sec, else ${D.perStepTimeoutSec}.`,
    }),
    perCallTimeoutSec: t.float({
      description: `Wall-clock seconds one host call may go unanswered (a frozen host) before its episode ends TIMEOUT, at most ${L.maxPerCallTimeoutSec}. Default ${PER_CALL_TIMEOUT_STEPS} × perStepTimeoutSec.`,
    }),
    priority: t.int({
      defaultValue: D.priority,
      description: `Higher runs first, -${L.maxPriority}..${L.maxPriority}; FIFO within a priority.`,
    }),
    exclusiveGpu: t.boolean({
      defaultValue: D.exclusiveGpu,
      description: 'Run alone: starts only when nothing runs, and nothing starts beside it.',
    }),
    marginalVramMb: t.int({ description: 'Declared extra VRAM (MB, ≥ 0), used by admission until calibration exists.' }),
    memoryBudgetMb: t.int({ description: 'Stop the run (FAILED, OUT_OF_BUDGET) when its process tree exceeds this RSS (MB, > 0).' }),
    viaSubprocess: t.boolean({
      defaultValue: D.viaSubprocess,
      description: 'false runs the batch inside the backend (same classes, same results).',
    }),
    overrides: t.field({
      type: 'JSON',
      description: `Config patches: node id → patch, e.g. {"agent": {"epsilon": 0.2}}; at most ${L.maxOverridesBytes} bytes of JSON, and each value must have the type its nodeset declares.`,
    }),
    dataset: t.string({ description: `Env panel dataset, at most ${L.maxNameChars} characters.` }),
    split: t.string({ description: `Env panel split, at most ${L.maxNameChars} characters.` }),
    episodeOffset: t.int({
      defaultValue: D.episodeOffset,
      description: 'Env episode index of the first episode; episode i plays env episode episodeOffset + i.',
    }),
    waitForRoomSec: t.float({
      description: `When the queue is full, wait up to this many seconds (0..${MAX_WAIT_FOR_ROOM_SEC}) for room instead of failing with QUEUE_FULL at once; the answer comes once the run is queued. Not part of the run's spec.`,
    }),
    name: t.string({ description: `A short human name for the run, at most ${L.maxRunNameChars} characters; editable with updateRun.` }),
    tags: t.stringList({
      description: `Tags to filter runs by, at most ${L.maxTags} of ${L.maxTagChars} characters; editable with updateRun.`,
    }),
    note: t.string({ description: `Free text about the run, at most ${L.maxNoteChars} characters; editable with updateRun.` }),
    repeats: t.int({
      description: `Plays of each episode, 1..${L.maxRepeats} (default 1), each with its own seed; episode i's play k is run index i × repeats + k, and each episode scores the mean of its plays. episodeCount × repeats is at most ${L.maxEpisodes}.`,
    }),
    shardSize: t.int({
      description: `Episodes per shard when the run is spread over machines (default ${DEFAULT_SHARD_SIZE}); shard boundaries depend on this alone, never on the number of machines.`,
    }),
    maxInfraErrorRate: t.float({
      description:
        'The share of counted plays (all but CANCELLED) that may end INFRA_ERROR, 0..1 (default 0: any fails the run); above it the run ends FAILED with error code INFRA_ERRORS, naming the first error and how many plays it hit.',
    }),
    stopWhen: t.field({ type: StopWhenInputRef, description: 'Stop the run as soon as its answer is known (docs/statistics.md).' }),
    preflight: t.boolean({
      description:
        "Whether the graph's nodesets check what they depend on (each model endpoint its llm nodes call) once before the first episode; one that does not answer fails the run at once (FAILED, PREFLIGHT_FAILED, naming the URL and the answer). Default true.",
    }),
  }),
});

interface StartEvalResult {
  summary: RunSummary;
  viaSubprocess: boolean;
}

const StartEvalPayloadRef = builder.objectRef<StartEvalResult>('StartEvalPayload').implement({
  description: 'The accepted run. It is only queued: the scheduler admits it when there is room.',
  fields: (t) => ({
    runId: t.id({ description: "The new run's id.", resolve: (p) => p.summary.runId }),
    status: t.field({ type: RunStatusRef, description: 'QUEUED on acceptance.', resolve: (p) => p.summary.status }),
    viaSubprocess: t.exposeBoolean('viaSubprocess', { description: 'Whether it will run in its own eval process.' }),
    run: t.field({ type: RunRef, description: 'The run as it stands.', resolve: (p, _a, ctx) => sourceFromSummary(p.summary, ctx) }),
  }),
});

builder.mutationFields((t) => ({
  startEval: t.field({
    type: StartEvalPayloadRef,
    description:
      "Queues a run and returns at once (status QUEUED). BAD_USER_INPUT for a bad graph, count or override; QUEUE_FULL past the queue's capacity (after waitForRoomSec, when given); STORAGE_FULL or STORAGE_READ_ONLY when the outputs folder cannot be written (nothing is left behind).",
    args: { input: t.arg({ type: StartEvalInputRef, required: true, description: 'What to evaluate.' }) },
    resolve: async (_root, { input }, ctx) => {
      try {
        // The scheduler checks the input with the run-spec schema; waitForRoomSec is how to submit, not what.
        const { waitForRoomSec, ...fields } = withoutNulls(input) as SubmitInput & { waitForRoomSec?: number };
        if (input.stopWhen) Object.assign(fields, { stopWhen: stopWhenOfInput(withoutNulls(input.stopWhen) as { when: string }) });
        const summary =
          waitForRoomSec === undefined
            ? await ctx.scheduler.submit(fields)
            : await submitWhenRoom(ctx.scheduler, fields, checkWaitForRoom(waitForRoomSec) * 1000, ctx.signal);
        return { summary, viaSubprocess: ctx.catalog.getRun(summary.runId)?.viaSubprocess ?? D.viaSubprocess };
      } catch (err) {
        // Naming a graph or nodeset that does not exist is bad input to this mutation.
        if (err instanceof NotFoundError) throw new BadInputError(err.message, { cause: err });
        throw err;
      }
    },
  }),
  cancelRun: t.field({
    type: RunRef,
    description:
      'Cancels a run: a queued one at once, a running one by stopping its process (finished episodes are kept). Idempotent: a run being cancelled or already CANCELLED is answered as it stands; CONFLICT for a run that finished otherwise; NOT_FOUND for an unknown run.',
    args: { id: t.arg.id({ required: true, description: 'The run id.' }) },
    resolve: async (_root, args, ctx) => {
      const runId = String(args.id);
      assertRunId(runId);
      return sourceFromSummary(await ctx.scheduler.cancel(runId), ctx);
    },
  }),
}));

/**
 * The run's states: the current one, then every later one (each episode boundary and each
 * other change), ending after the terminal state. Nothing is skipped for a slow reader: a state
 * holds no copy of the episode records, so its queue grows by a few KB per episode at most (its aggregates).
 */
export function runSummaries(watcher: RunWatcher, runId: string): Repeater<RunSummary> {
  return new Repeater<RunSummary>(async (push, stop) => {
    const unsubscribe = watcher.subscribe(runId, (state) => {
      void push(state);
      if (isTerminalRunStatus(state.status)) stop();
    });
    await stop;
    unsubscribe();
  }, new FixedBuffer(Number.MAX_SAFE_INTEGER));
}

/** NOT_FOUND unless the run's directory exists (or the catalog knows it). */
export async function assertRunExists(
  runId: string,
  ctx: { runs: { exists(id: string): Promise<boolean> }; catalog: { getRun(id: string): unknown } },
): Promise<void> {
  assertRunId(runId);
  if (!(await ctx.runs.exists(runId)) && !ctx.catalog.getRun(runId)) throw new NotFoundError(`run "${runId}"`);
}

builder.subscriptionFields((t) => ({
  runProgress: t.field({
    type: RunRef,
    description:
      "The run's state now, then one state at every episode boundary (episodesDone takes every value, even when episodes finish faster than summary.json is read; their order is episodeCompleted's) and at every other change, ending after the terminal state. Each state's seq is one higher than the last. A client that connects late (or reconnects) gets the current (or final) state first, then the rest.",
    args: { id: t.arg.id({ required: true, description: 'The run id.' }) },
    subscribe: async (_root, args, ctx) => {
      const runId = String(args.id);
      await assertRunExists(runId, ctx);
      // The disk refused this run's end (or its dir is gone): no file will ever say it, so say it here.
      const final = ctx.scheduler.unrecordedSummary?.(runId);
      if (final)
        return new Repeater<RunSummary>(async (push, stop) => {
          await push(final);
          stop();
        });
      return runSummaries(ctx.watcher, runId);
    },
    resolve: (state: RunSummary, _args, ctx) => ({ ...sourceFromSummary(state, ctx), seq: state.seq }),
  }),
}));

export type { RunStatus };
