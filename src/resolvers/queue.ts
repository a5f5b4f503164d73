/**
 * The queue and the active jobs: `queue`, `activeJobs` and the `queueChanged` subscription.
 */
import { Repeater, SlidingBuffer } from 'graphql-yoga';
import type { ActiveJob, QueueEntry, ResourceEstimate } from '../scheduler/types.js';
import { builder } from './builder.js';
import type { ApiContext } from './context.js';
import type { QueueState } from './pubsub.js';
import { RunRef } from './refs.js';
import { loadRun } from './run-source.js';

const EstimateSourceRef = builder.enumType('EstimateSource', {
  description: 'Where a memory estimate comes from.',
  values: {
    CALIBRATED: { value: 'calibrated', description: 'The peak RSS of earlier runs of the same graph at the same worker count.' },
    DECLARED: { value: 'declared', description: "The figures the graph's nodesets declare in their manifests." },
    MARGINAL: { value: 'marginal', description: 'The marginalVramMb given at start.' },
    DEFAULT: { value: 'default', description: 'A built-in default (nothing better was known).' },
  } as const,
});

const ResourceEstimateRef = builder.objectRef<ResourceEstimate>('ResourceEstimate').implement({
  description: 'Memory a run is expected to need (or has reserved while it runs).',
  fields: (t) => ({
    ramMb: t.exposeFloat('ramMb', { description: 'RAM in MB.' }),
    vramMb: t.exposeFloat('vramMb', { description: 'GPU memory in MB.' }),
    source: t.field({ type: EstimateSourceRef, description: 'Where the figures come from.', resolve: (e) => e.source }),
    cores: t.float({
      nullable: true,
      description: 'CPU cores: measured on earlier runs of the graph, else declared by its replicated nodesets (null: not counted).',
      resolve: (e) => e.cores ?? null,
    }),
  }),
});

const runOf = (runId: string, ctx: ApiContext) => loadRun(runId, ctx).catch(() => null);

const QueueEntryRef = builder.objectRef<QueueEntry>('QueueEntry').implement({
  description: 'A run waiting to be admitted.',
  fields: (t) => ({
    runId: t.exposeID('runId', { description: 'The run id.' }),
    position: t.exposeInt('position', { description: '1-based place in admission order (priority first, then FIFO).' }),
    priority: t.exposeInt('priority', { description: 'Higher runs first.' }),
    graphName: t.exposeString('graphName', { description: 'The graph to evaluate.' }),
    episodeCount: t.exposeInt('episodeCount', { description: 'Episodes asked for.' }),
    workerCount: t.exposeInt('workerCount', { description: 'Workers asked for.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was submitted.', resolve: (q) => q.createdAt }),
    exclusiveGpu: t.exposeBoolean('exclusiveGpu', { description: 'Whether it must run alone.' }),
    waitingReason: t.exposeString('waitingReason', { description: 'Why it has not started yet, in words.' }),
    estimate: t.field({ type: ResourceEstimateRef, description: 'The memory admission expects it to need.', resolve: (q) => q.estimate }),
    reserving: t.exposeBoolean('reserving', { description: 'True once it has waited long enough to hold back smaller jobs.' }),
    run: t.field({ type: RunRef, nullable: true, description: 'The run itself.', resolve: (q, _a, ctx) => runOf(q.runId, ctx) }),
  }),
});

const ActiveJobRef = builder.objectRef<ActiveJob>('ActiveJob').implement({
  description: 'A run executing now.',
  fields: (t) => ({
    runId: t.exposeID('runId', { description: 'The run id.' }),
    priority: t.exposeInt('priority', { description: 'Its priority.' }),
    pid: t.exposeInt('pid', { nullable: true, description: 'Its eval process id (null on the in-process path).' }),
    graphName: t.exposeString('graphName', { description: 'The graph being evaluated.' }),
    startedAt: t.field({ type: 'DateTime', description: 'When it was admitted.', resolve: (j) => j.startedAt }),
    cancelRequested: t.exposeBoolean('cancelRequested', {
      description: 'True once cancelRun was asked for it: it is stopping and will end CANCELLED.',
    }),
    episodesDone: t.exposeInt('episodesDone', { description: 'Episodes finished so far.' }),
    episodeCount: t.exposeInt('episodeCount', { description: 'Episodes asked for.' }),
    progress: t.float({
      description: 'episodesDone / episodeCount, from 0 to 1.',
      resolve: (j) => (j.episodeCount > 0 ? Math.min(1, j.episodesDone / j.episodeCount) : 0),
    }),
    workerCount: t.exposeInt('workerCount', { description: 'Its workers.' }),
    viaSubprocess: t.exposeBoolean('viaSubprocess', { description: 'Whether it runs in its own eval process.' }),
    exclusiveGpu: t.exposeBoolean('exclusiveGpu', { description: 'Whether it runs alone.' }),
    reservation: t.field({
      type: ResourceEstimateRef,
      description: 'The memory held for it while it runs.',
      resolve: (j) => j.reservation,
    }),
    rssMb: t.exposeFloat('rssMb', { nullable: true, description: 'Latest resident memory of its process tree, MB.' }),
    vramMb: t.exposeFloat('vramMb', {
      nullable: true,
      description:
        'Latest GPU memory of its process tree as nvidia-smi attributes it, MB (null where per-process GPU memory is not measured).',
    }),
    run: t.field({ type: RunRef, nullable: true, description: 'The run itself.', resolve: (j, _a, ctx) => runOf(j.runId, ctx) }),
  }),
});

export const QueueStateRef = builder.objectRef<QueueState>('QueueState').implement({
  description: 'The queue and the active jobs at one moment.',
  fields: (t) => ({
    queue: t.field({ type: [QueueEntryRef], description: 'Waiting runs in admission order.', resolve: (s) => s.queue }),
    activeJobs: t.field({ type: [ActiveJobRef], description: 'Running runs.', resolve: (s) => s.activeJobs }),
  }),
});

export const queueState = (ctx: Pick<ApiContext, 'scheduler'>): QueueState => ({
  queue: ctx.scheduler.queue(),
  activeJobs: ctx.scheduler.activeJobs(),
});

builder.queryFields((t) => ({
  queue: t.field({
    type: [QueueEntryRef],
    description: 'Runs waiting for admission, in admission order, each with the reason it still waits.',
    resolve: (_root, _args, ctx) => ctx.scheduler.queue(),
  }),
  activeJobs: t.field({
    type: [ActiveJobRef],
    description: 'Runs executing now, with their priority, pid and progress.',
    resolve: (_root, _args, ctx) => ctx.scheduler.activeJobs(),
  }),
}));

builder.subscriptionFields((t) => ({
  queueChanged: t.field({
    type: QueueStateRef,
    description: 'The queue and the active jobs now, then again at every change (a slow reader skips to the newest).',
    subscribe: (_root, _args, ctx) =>
      new Repeater<QueueState>(async (push, stop) => {
        const events = ctx.pubsub.subscribe('queueChanged');
        void push(queueState(ctx));
        void stop.then(() => events.return());
        for await (const state of events) await push(state);
        stop();
      }, new SlidingBuffer(1)),
    resolve: (state: QueueState) => state,
  }),
}));
