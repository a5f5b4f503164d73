/**
 * Episodes: the `Episode` type (record, firing log, assets) and the `episodeCompleted`
 * subscription (each finished episode once, in the order the summary reveals them).
 */
import { FixedBuffer, Repeater } from 'graphql-yoga';
import type { AssetRef, DroppedMetric, NodeErrorEntry } from '../core/types.js';
import { isTerminalRunStatus } from '../statuses.js';
import { mimeOf } from '../store/run-reader.js';
import type { RunWatcher } from '../store/run-watcher.js';
import type { EpisodeRecord } from '../store/types.js';
import { builder } from './builder.js';
import { EVENTS_PAGE, LOG_PAGE, checkPage } from './paging.js';
import { EpisodeRef, EpisodeStatusRef, type EpisodeSource } from './refs.js';
import { assertRunExists } from './run.js';

const NodeErrorRef = builder.objectRef<NodeErrorEntry>('NodeError').implement({
  description: 'A node that returned or threw an error during the episode.',
  fields: (t) => ({
    nodeId: t.exposeString('nodeId', { description: "The node's id in the graph." }),
    step: t.exposeInt('step', { description: 'The iteration it failed in (0-based).' }),
    message: t.exposeString('message', { description: 'The error message.' }),
  }),
});

const DroppedMetricRef = builder.objectRef<DroppedMetric>('DroppedMetric').implement({
  description:
    'A metric a graphOut received as NaN or ±Infinity: JSON cannot carry it, so the episode does not report it and each aggregate counts it as excluded.',
  fields: (t) => ({
    name: t.exposeString('name', { description: "The metric's name." }),
    value: t.exposeString('value', { description: 'The value it had: NaN, Infinity or -Infinity.' }),
    nodeId: t.exposeString('nodeId', { description: 'The node whose output carried it.' }),
    step: t.exposeInt('step', { description: 'The iteration it was sent in (0-based).' }),
  }),
});

interface AssetSource {
  runId: string;
  index: number;
  ref: AssetRef;
}

const AssetRef_ = builder.objectRef<AssetSource>('Asset').implement({
  description: 'A file an episode produced (e.g. the gridnav trajectory PNG), served over HTTP.',
  fields: (t) => ({
    name: t.string({ description: "File name inside the episode's assets folder.", resolve: (a) => a.ref.name }),
    mime: t.string({ description: 'Media type, e.g. image/png.', resolve: (a) => a.ref.mime || mimeOf(a.ref.name) }),
    bytes: t.int({ description: 'Size in bytes.', resolve: (a) => a.ref.bytes }),
    nodeId: t.string({ nullable: true, description: 'The node that produced it.', resolve: (a) => a.ref.nodeId ?? null }),
    step: t.int({ nullable: true, description: 'The iteration it was produced in.', resolve: (a) => a.ref.step ?? null }),
    url: t.string({
      description: 'Where to GET it on this server (a path: `/runs/<runId>/episodes/<index>/assets/<name>`).',
      resolve: (a, _args, ctx) => ctx.assetUrl(a.runId, a.index, a.ref.name),
    }),
  }),
});

interface LogLineSource {
  line: number;
  entry: Record<string, unknown>;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

const LogLineRef = builder.objectRef<LogLineSource>('LogLine').implement({
  description: "One node firing from the episode's log.jsonl.",
  fields: (t) => ({
    line: t.exposeInt('line', { description: 'Line number in the log, 0-based.' }),
    step: t.int({ nullable: true, description: 'Iteration (0-based).', resolve: (l) => num(l.entry.step) }),
    nodeId: t.string({ nullable: true, description: 'The node that fired.', resolve: (l) => str(l.entry.nodeId) }),
    type: t.string({ nullable: true, description: 'Its node type.', resolve: (l) => str(l.entry.type) }),
    ms: t.float({ nullable: true, description: 'How long the firing took, in ms.', resolve: (l) => num(l.entry.ms) }),
    inputs: t.field({
      type: 'JSON',
      nullable: true,
      description: 'Its inputs (assets replaced by references, long arrays elided).',
      resolve: (l) => l.entry.inputs ?? null,
    }),
    outputs: t.field({
      type: 'JSON',
      nullable: true,
      description: 'Its outputs (assets replaced by references, long arrays elided).',
      resolve: (l) => l.entry.outputs ?? null,
    }),
    error: t.string({ nullable: true, description: 'The error, when it failed.', resolve: (l) => str(l.entry.error) }),
    entry: t.field({ type: 'JSON', description: 'The whole line as written.', resolve: (l) => l.entry }),
  }),
});

const LogPageRef = builder.objectRef<{ lines: LogLineSource[]; total: number }>('LogPage').implement({
  description: "A page of an episode's firing log.",
  fields: (t) => ({
    lines: t.field({ type: [LogLineRef], description: 'The lines on this page, in order.', resolve: (p) => p.lines }),
    total: t.exposeInt('total', { description: 'Lines in the whole log.' }),
  }),
});

const EventPageRef = builder.objectRef<{ lines: LogLineSource[]; total: number }>('EventPage').implement({
  description:
    'A page of an episode\'s events.jsonl: each model call (`type: "llm_call"`: new messages, response, tool calls, tokens, latency, cached, retries), infrastructure event (`type: "infra"`) and tool call, with the `step` and `nodeId` that emitted it.',
  fields: (t) => ({
    events: t.field({
      type: ['JSON'],
      description: 'The events on this page, in the order they were emitted (each as written).',
      resolve: (p) => p.lines.map((l) => l.entry),
    }),
    total: t.exposeInt('total', { description: 'Events in the whole file (0 when the episode emitted none).' }),
  }),
});

const opt = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

EpisodeRef.implement({
  description: 'One finished episode: how it ended, its metrics, where it ran, its log and its files.',
  fields: (t) => ({
    runId: t.id({ description: 'The run it belongs to.', resolve: (e) => e.runId }),
    index: t.int({ description: 'Its index in the run (0-based).', resolve: (e) => e.record.index }),
    episodeId: t.string({ description: "The env's id for it, e.g. `gridnav/val/3`.", resolve: (e) => e.record.episodeId }),
    repeat: t.int({
      nullable: true,
      description:
        'On a run with repeats: which play (0-based) of its episode this is (index = episode × repeats + repeat); the plays share episodeId. Null without repeats.',
      resolve: (e) => e.record.repeat ?? null,
    }),
    status: t.field({ type: EpisodeStatusRef, description: 'How it ended.', resolve: (e) => e.record.status }),
    steps: t.int({ description: 'Iterations run (also for partial endings).', resolve: (e) => e.record.steps }),
    stepBudget: t.int({
      description: 'The budget it ran under (API override → env → graph → default).',
      resolve: (e) => e.record.stepBudget,
    }),
    metrics: t.field({ type: 'JSON', description: 'Metric name → value (partial when it ended early).', resolve: (e) => e.record.metrics }),
    droppedMetrics: t.field({
      type: [DroppedMetricRef],
      description: 'Metrics it sent as NaN or ±Infinity, left out of `metrics` (empty when none).',
      resolve: (e) => e.record.droppedMetrics ?? [],
    }),
    seed: t.float({
      description: 'Its seed, derived from the run seed and its index (an unsigned 32-bit integer).',
      resolve: (e) => e.record.seed,
    }),
    workerId: t.int({ description: 'The worker that ran it (placement only; never affects results).', resolve: (e) => e.record.workerId }),
    durationMs: t.float({ description: 'Wall-clock duration in ms.', resolve: (e) => e.record.durationMs }),
    startedAt: t.field({ type: 'DateTime', description: 'When it started.', resolve: (e) => e.record.startedAt }),
    finishedAt: t.field({ type: 'DateTime', description: 'When it ended.', resolve: (e) => e.record.finishedAt }),
    task: t.string({ nullable: true, description: "The env's task name, if it has tasks.", resolve: (e) => opt(e.record.task) }),
    scene: t.string({ nullable: true, description: "The env's scene, if any.", resolve: (e) => opt(e.record.scene) }),
    instruction: t.string({
      nullable: true,
      description: 'The instruction given to the agent, if any.',
      resolve: (e) => opt(e.record.instruction),
    }),
    sampleId: t.string({
      nullable: true,
      description: 'The dataset sample it played (dataset envs): `episodeId` is `<dataset>/<split>/<sampleId>`.',
      resolve: (e) => opt(e.record.sampleId),
    }),
    cluster: t.string({
      nullable: true,
      description: "The sample's group (its `metadata.cluster`), if it has one.",
      resolve: (e) => opt(e.record.cluster),
    }),
    traceId: t.string({
      nullable: true,
      description: "The OpenTelemetry trace id of the episode's span, when the run was traced (docs/tracing.md).",
      resolve: (e) => opt(e.record.traceId),
    }),
    error: t.string({
      nullable: true,
      description: 'Why it ended early, for TIMEOUT, ERROR, CRASHED, CANCELLED, INFRA_ERROR and a node-declared BUDGET_EXHAUSTED.',
      resolve: (e) => opt(e.record.error),
    }),
    nodeErrors: t.field({ type: [NodeErrorRef], description: 'Nodes that failed, for ERROR.', resolve: (e) => e.record.nodeErrors ?? [] }),
    assets: t.field({
      type: [AssetRef_],
      description: 'Files it produced, each with a URL on this server.',
      resolve: (e) => (e.record.assets ?? []).map((ref) => ({ runId: e.runId, index: e.record.index, ref })),
    }),
    log: t.field({
      type: LogPageRef,
      description: 'Its node-firing log (log.jsonl), paged.',
      args: {
        offset: t.arg.int({ defaultValue: 0, description: 'Lines to skip.' }),
        first: t.arg.int({ defaultValue: LOG_PAGE.first, description: `Page size, at most ${LOG_PAGE.max}.` }),
      },
      resolve: (e, args, ctx) => {
        const page = checkPage('log', args.offset, args.first, LOG_PAGE);
        return ctx.runs.readLog(e.runId, e.record.index, page.offset, page.first);
      },
    }),
    events: t.field({
      type: EventPageRef,
      description: 'Its event history (events.jsonl: model calls, retries, tool calls), paged.',
      args: {
        offset: t.arg.int({ defaultValue: 0, description: 'Events to skip.' }),
        first: t.arg.int({ defaultValue: EVENTS_PAGE.first, description: `Page size, at most ${EVENTS_PAGE.max}.` }),
      },
      resolve: (e, args, ctx) => {
        const page = checkPage('events', args.offset, args.first, EVENTS_PAGE);
        return ctx.runs.readEvents(e.runId, e.record.index, page.offset, page.first);
      },
    }),
  }),
});

/** Finished episodes not seen before, in the order they finished (index breaks ties). */
function newRecords(records: readonly EpisodeRecord[], seen: Set<number>): EpisodeRecord[] {
  const fresh = records.filter((r) => !seen.has(r.index));
  fresh.sort((a, b) => (a.finishedAt < b.finishedAt ? -1 : a.finishedAt > b.finishedAt ? 1 : a.index - b.index));
  for (const r of fresh) seen.add(r.index);
  return fresh;
}

/** Each finished episode of the run once, then the end once the run is over. */
export function episodeRecords(watcher: RunWatcher, runId: string, includeExisting: boolean): Repeater<EpisodeRecord> {
  return new Repeater<EpisodeRecord>(async (push, stop) => {
    const seen = new Set<number>();
    let first = true;
    const unsubscribe = watcher.subscribe(runId, (state, added) => {
      // The first state brings the episodes already finished; each later one those it added.
      const fresh = newRecords(first ? state.episodes : added, seen);
      if (first) {
        first = false;
        if (!includeExisting) fresh.length = 0;
      }
      for (const r of fresh) void push(r);
      if (isTerminalRunStatus(state.status)) stop();
    });
    await stop;
    unsubscribe();
  }, new FixedBuffer(Number.MAX_SAFE_INTEGER));
}

builder.subscriptionFields((t) => ({
  episodeCompleted: t.field({
    type: EpisodeRef,
    description:
      'Each episode of the run once as it finishes, in completion order; ends when the run is over. With includeExisting (the default) the episodes already finished come first, so a client that (re)connects misses none.',
    args: {
      runId: t.arg.id({ required: true, description: 'The run id.' }),
      includeExisting: t.arg.boolean({ defaultValue: true, description: 'Start with the episodes that have already finished.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const runId = String(args.runId);
      await assertRunExists(runId, ctx);
      return episodeRecords(ctx.watcher, runId, args.includeExisting ?? true);
    },
    resolve: (record: EpisodeRecord, args): EpisodeSource => ({ runId: String(args.runId), record }),
  }),
}));
