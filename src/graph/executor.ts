/**
 * GraphExecutor: runs one episode of a validated graph. Each iteration fires every node once
 * off a ready queue in dependency order of the non-loop edges; loop edges carry a value into
 * the next iteration. Whatever the ending, the graphOut sinks' last inputs become the metrics.
 */
import { BadInputError, ConflictError, errorMessage } from '../errors.js';
import { AssetNamer } from './asset-namer.js';
import { CallWatch } from './call-watch.js';
import { boundMessage, summarizePorts } from './firing-summary.js';
import type { ValidatedGraph } from './graph.js';
import {
  ENDING_OUTPUT,
  EVENTS_OUTPUT,
  isAssetValue,
  NODE_ENDING_KINDS,
  NON_FINITE_OUTPUT,
  NON_FINITE_TEXTS,
  type AssetRef,
  type DroppedMetric,
  type EpisodeEvent,
  type NodeEnding,
  type CallContext,
  type ExecutorEnding,
  type ExecutorResult,
  type FiringLogEntry,
  type MetricValue,
  type NodeErrorEntry,
  type NodeOutputs,
  type NonFiniteNote,
  type NonFiniteText,
  type ResolvedNodeType,
} from '../core/types.js';
import { isScoreEntry, type ScoreEntry } from '../core/score-entry.js';

/** nodeset name → URL of the host this episode must use (a worker's tagged host). */
export type UrlOverrides = ReadonlyMap<string, string> | Readonly<Record<string, string>>;

/** An asset taken out of a node's outputs, for the episode's `assets/` folder. */
export interface ExecutorAsset {
  /** Unique within the episode and safe as a file name. */
  name: string;
  mime: string;
  data: Buffer;
  nodeId: string;
  step: number;
}

export interface StepEvent {
  step: number;
  /** Every node that fired successfully this iteration, with assets replaced by `{ $assetRef }`. */
  outputs: Record<string, NodeOutputs>;
}

export interface GraphExecutorOptions {
  graph: ValidatedGraph;
  /** Iterations at most; a positive integer (resolved by the caller: API → env → graph → default). */
  stepBudget: number;
  /** Handed to every call, with `step` and `nodeId` filled in per firing. */
  context: Omit<CallContext, 'step' | 'nodeId'>;
  /** Routes each nodeset's calls to a specific host. @default no overrides: the registered host */
  urlOverrides?: UrlOverrides;
  /** Timeout or cancel: the episode stops at once with ending `aborted` and its partial metrics. */
  signal?: AbortSignal;
  /**
   * A single node call unanswered after this long is reported to `onCallTimeout` (which
   * decides what follows, typically aborting `signal`). @default no per-call limit
   */
  callTimeoutMs?: number;
  /** A call passed `callTimeoutMs` (called once per such call, while its iteration still waits). */
  onCallTimeout?(call: { nodeId: string; step: number; ms: number }): void;
  /** One entry per node firing, in topological order within an iteration. */
  onFiring?(entry: FiringLogEntry): void;
  /** Receives each asset; a returned promise is awaited before the node's outputs flow on. */
  onAsset?(asset: ExecutorAsset): void | Promise<void>;
  /**
   * Each event a node put in its `$events` output, with `step` and `nodeId` added: per
   * iteration, in topological order of the nodes (so the order never depends on which call
   * answered first), and within a node in the order given.
   */
  onEvent?(event: EpisodeEvent): void;
  /** After each fully run iteration (live Play). Not called when not given. */
  onStep?(event: StepEvent): void;
}

interface EdgePlan {
  /** Index (in topological order) of the node at the other end. */
  node: number;
  fromPort: string;
  toPort: string;
}

interface NodePlan {
  id: string;
  type: string;
  resolved: ResolvedNodeType | undefined;
  config: Record<string, unknown>;
  url: string | undefined;
  inputs: EdgePlan[];
  loopInputs: EdgePlan[];
  /** Non-loop edges out, `node` = the target. */
  outputs: EdgePlan[];
  /** `{ error: string }` is an output here, not a failure: the function declares an `error` port. */
  hasErrorPort: boolean;
}

type IterationEnd = { kind: 'ok' } | { kind: 'crashed'; error: string } | { kind: 'aborted'; error: string };

/** Where a graphOut port's last value came from, and the numbers in it its host could not send (`$nonFinite`). */
interface SinkSource {
  nodeId: string;
  step: number;
  notes: NonFiniteNote[] | undefined;
}

/** Longest stretch without yielding to timers, so a wall-clock limit can fire even when every node is in-process. */
const YIELD_EVERY_MS = 5;

const isOutputsObject = (v: unknown): v is NodeOutputs => typeof v === 'object' && v !== null && !Array.isArray(v);

const isScalarMetric = (v: unknown): v is MetricValue =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** The graphOut port whose score objects become the record's `scores`. */
export const SCORE_PORT = 'score';

/** Score objects on a `score` port: one, or a list; anything not shaped like a score is ignored. */
function scoreEntriesOf(v: unknown): ScoreEntry[] {
  return (Array.isArray(v) ? v : [v]).filter(isScoreEntry);
}

function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r.name === 'AbortError' && !r.message ? 'aborted' : r.message;
  return r === undefined ? 'aborted' : String(r);
}

export class GraphExecutor {
  private readonly o: GraphExecutorOptions;
  private readonly plans: NodePlan[];
  private readonly roots: number[];
  /** graphOut node index → port → last value received (ports listed in edge order). */
  private readonly sinks = new Map<number, Map<string, unknown>>();
  /** graphOut node index → port → where its last value came from. */
  private readonly sinkSources = new Map<number, Map<string, SinkSource>>();
  private readonly sinkPorts = new Map<number, string[]>();
  /** Aborts the calls in flight; the caller's signal reaches it through run()'s abort listener (AbortSignal.any costs tens of µs per episode). */
  private readonly internal = new AbortController();
  private readonly namer = new AssetNamer();
  private readonly errors: NodeErrorEntry[] = [];
  private readonly assetRefs: AssetRef[] = [];
  private started = false;
  private stepsRun = 0;
  private prev: Array<NodeOutputs | undefined> = [];
  /** The previous iteration's `$nonFinite` notes, by node (loop edges deliver its values). */
  private prevNotes: Array<NonFiniteNote[] | undefined> = [];
  private stopIteration: ((end: IterationEnd) => void) | undefined;
  /** Keeps the per-call limit when there is one (made by run()). */
  private watch: CallWatch | undefined;

  constructor(options: GraphExecutorOptions) {
    const { graph, stepBudget } = options;
    if (!Number.isInteger(stepBudget) || stepBudget < 1) {
      throw new BadInputError(`step budget must be a positive integer, got ${String(stepBudget)}`);
    }
    this.o = options;

    const position = new Map(graph.order.map((id, i) => [id, i]));
    const overrides = options.urlOverrides;
    const urlFor = (nodeset: string): string | undefined =>
      overrides === undefined
        ? undefined
        : overrides instanceof Map
          ? overrides.get(nodeset)
          : Object.hasOwn(overrides, nodeset)
            ? (overrides as Record<string, string>)[nodeset]
            : undefined;

    this.plans = graph.order.map((id) => {
      const v = graph.nodes.get(id)!;
      const edge = (node: string, fromPort: string, toPort: string): EdgePlan => ({ node: position.get(node)!, fromPort, toPort });
      return {
        id,
        type: v.node.type,
        resolved: v.resolved,
        // A private copy: a handler that mutates its config cannot leak into another episode.
        config: structuredClone(v.node.config ?? {}),
        url: v.resolved ? urlFor(v.resolved.nodeset) : undefined,
        inputs: v.incoming.map((e) => edge(e.from.node, e.from.port, e.to.port)),
        loopInputs: v.loopIncoming.map((e) => edge(e.from.node, e.from.port, e.to.port)),
        outputs: [],
        hasErrorPort: v.resolved?.fn.outputs.some((p) => p.name === 'error') ?? false,
      };
    });
    this.plans.forEach((p, i) => {
      for (const e of p.inputs) this.plans[e.node]!.outputs.push({ node: i, fromPort: e.fromPort, toPort: e.toPort });
    });
    this.roots = this.plans.flatMap((p, i) => (p.inputs.length === 0 ? [i] : []));
    for (const id of graph.graphOuts) {
      const v = graph.nodes.get(id)!;
      const node = position.get(id)!;
      this.sinks.set(node, new Map());
      this.sinkSources.set(node, new Map());
      // Spec edge order, so metric keys come out in the same order on every run.
      this.sinkPorts.set(
        node,
        [...v.incoming, ...v.loopIncoming].sort((a, b) => a.index - b.index).map((e) => e.to.port),
      );
    }
  }

  /** Iterations fully run so far. */
  get steps(): number {
    return this.stepsRun;
  }

  /** Node errors so far, in step order, then topological order. */
  get nodeErrors(): readonly NodeErrorEntry[] {
    return this.errors;
  }

  get assets(): readonly AssetRef[] {
    return this.assetRefs;
  }

  /**
   * The metrics as of now: for each graphOut (in spec order) each port's last value; a
   * `metrics` object is flattened to its scalar entries, any other scalar port is kept by name.
   */
  harvestMetrics(): Record<string, MetricValue> {
    return this.harvest().metrics;
  }

  /**
   * harvestMetrics, and the metrics left out because their value was NaN or ±Infinity (which
   * arrive as `null`, named by the host's `$nonFinite`), each once and only when no other
   * graphOut reported the name.
   */
  private harvest(): { metrics: Record<string, MetricValue>; dropped: DroppedMetric[] } {
    const metrics: Record<string, MetricValue> = {};
    const dropped: DroppedMetric[] = [];
    const drop = (name: string, v: unknown, src: SinkSource | undefined, key?: string): void => {
      const value = nonFiniteOf(v, src?.notes, key);
      if (value && src) dropped.push({ name, value, nodeId: src.nodeId, step: src.step });
    };
    let scored = false;
    for (const [node, ports] of this.sinkPorts) {
      const last = this.sinks.get(node)!;
      const sources = this.sinkSources.get(node)!;
      for (const port of ports) {
        if (!last.has(port)) continue;
        const v = last.get(port);
        if (port === 'metrics' && isOutputsObject(v)) {
          for (const [k, x] of Object.entries(v)) {
            if (isScalarMetric(x)) metrics[k] = x;
            else drop(k, x, sources.get(port), k);
          }
        } else if (port === SCORE_PORT && scoreEntriesOf(v).length > 0) {
          // The first score stands for the episode: `score` its value, `correct` whether it is 1. A plain number here stays a metric.
          if (scored) continue;
          scored = true;
          const first = scoreEntriesOf(v)[0]!;
          metrics.score = first.value;
          metrics.correct = first.value === 1;
        } else if (isScalarMetric(v)) {
          metrics[port] = v;
        } else drop(port, v, sources.get(port));
      }
    }
    const kept = new Map<string, DroppedMetric>();
    for (const d of dropped) if (!Object.hasOwn(metrics, d.name) && !kept.has(d.name)) kept.set(d.name, d);
    return { metrics, dropped: [...kept.values()] };
  }

  /** Score entries as of now: each graphOut's `score` port (a score object or a list of them), graphOuts in spec order. */
  harvestScores(): ScoreEntry[] {
    const scores: ScoreEntry[] = [];
    for (const [node, ports] of this.sinkPorts) {
      if (ports.includes(SCORE_PORT)) scores.push(...scoreEntriesOf(this.sinks.get(node)!.get(SCORE_PORT)));
    }
    return scores;
  }

  /** Runs the episode to its end. Resolves in every ending; rejects only if a callback throws. */
  async run(): Promise<ExecutorResult> {
    if (this.started) throw new ConflictError('a GraphExecutor runs once; build a new one for each episode');
    this.started = true;
    const external = this.o.signal;
    const onAbort = (): void => {
      this.internal.abort(external!.reason);
      this.stopIteration?.({ kind: 'aborted', error: abortReason(external!) });
    };
    external?.addEventListener('abort', onAbort, { once: true });
    const limit = this.o.callTimeoutMs;
    const onCallTimeout = this.o.onCallTimeout;
    // A frozen host never answers: without this, only the episode's whole allowance would end the wait.
    if (limit !== undefined && onCallTimeout)
      this.watch = new CallWatch(limit, (c) => onCallTimeout({ nodeId: c.nodeId, step: c.step, ms: limit }));
    let lastYield = performance.now();
    try {
      for (let step = 0; step < this.o.stepBudget; step++) {
        if (external?.aborted) return this.result('aborted', abortReason(external));
        const errorsBefore = this.errors.length;
        const it = await this.runIteration(step);
        if (it.end.kind !== 'ok') return this.result(it.end.kind, it.end.error);
        this.stepsRun = step + 1;
        if (this.o.onStep) {
          const outputs: Record<string, NodeOutputs> = {};
          it.outputs.forEach((out, i) => {
            if (out) outputs[this.plans[i]!.id] = out;
          });
          this.o.onStep({ step, outputs });
        }
        if (this.errors.length > errorsBefore) return this.result('error');
        if (it.ending) return this.result(it.ending.kind, it.ending.message);
        if (it.done) return this.result('completed');
        this.prev = it.outputs;
        this.prevNotes = it.nonFinite;
        if (performance.now() - lastYield > YIELD_EVERY_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          lastYield = performance.now();
        }
      }
      return this.result('budget_exhausted', `the step budget of ${this.o.stepBudget} step(s) ran out before any node said done`);
    } finally {
      external?.removeEventListener('abort', onAbort);
      this.watch?.close();
      this.stopIteration = undefined;
    }
  }

  private result(ending: ExecutorEnding, error?: string): ExecutorResult {
    const { metrics, dropped } = this.harvest();
    const out: ExecutorResult = {
      ending,
      steps: this.stepsRun,
      metrics,
      nodeErrors: [...this.errors],
      assets: [...this.assetRefs],
    };
    const scores = this.harvestScores();
    if (scores.length > 0) out.scores = scores;
    if (dropped.length > 0) out.droppedMetrics = dropped;
    if (ending === 'error' && error === undefined) {
      error = this.errors.map((e) => `node "${e.nodeId}" failed at step ${e.step}: ${e.message}`).join('; ');
    }
    if (error !== undefined) out.error = error;
    return out;
  }

  /** One iteration; log entries and node errors are flushed in topological order whatever the completion order. */
  private async runIteration(step: number): Promise<{
    end: IterationEnd;
    outputs: Array<NodeOutputs | undefined>;
    nonFinite: Array<NonFiniteNote[] | undefined>;
    done: boolean;
    ending?: NodeEnding;
  }> {
    const plans = this.plans;
    const n = plans.length;
    const outputs = new Array<NodeOutputs | undefined>(n);
    const nonFinite = new Array<NonFiniteNote[] | undefined>(n);
    const logEntries = this.o.onFiring ? new Array<FiringLogEntry | undefined>(n) : undefined;
    const stepErrors = new Array<NodeErrorEntry | undefined>(n);
    const stepEvents = new Array<EpisodeEvent[] | undefined>(n);
    const stepEndings = new Array<NodeEnding | undefined>(n);
    let done = false;

    // Loop edges into a sink deliver the previous iteration's value now.
    for (const [node] of this.sinkPorts) {
      for (const e of plans[node]!.loopInputs) {
        const v = this.prev[e.node]?.[e.fromPort];
        if (v !== undefined) this.deliver(node, e, v, plans[e.node]!.id, step - 1, this.prevNotes[e.node]);
      }
    }

    const end = await new Promise<IterationEnd>((resolve) => {
      let left = n;
      let settled = false;
      const waiting = plans.map((p) => p.inputs.length);
      const blocked = new Uint8Array(n);

      const finish = (e: IterationEnd): void => {
        if (settled) return;
        settled = true;
        this.stopIteration = undefined;
        resolve(e);
      };
      this.stopIteration = finish;

      const resolveNode = (i: number, ok: boolean): void => {
        left--;
        for (const e of plans[i]!.outputs) {
          if (!ok) blocked[e.node] = 1;
          if (--waiting[e.node]! === 0) start(e.node);
        }
        if (left === 0) finish({ kind: 'ok' });
      };

      const gather = (p: NodePlan): Record<string, unknown> => {
        const inputs: Record<string, unknown> = {};
        for (const e of p.inputs) {
          const v = outputs[e.node]?.[e.fromPort];
          if (v !== undefined) inputs[e.toPort] = v;
        }
        for (const e of p.loopInputs) {
          const v = this.prev[e.node]?.[e.fromPort];
          if (v !== undefined) inputs[e.toPort] = v;
        }
        return inputs;
      };

      const fail = (i: number, inputs: Record<string, unknown>, t0: number, message: string): void => {
        const p = plans[i]!;
        stepErrors[i] = { nodeId: p.id, step, message };
        if (logEntries)
          logEntries[i] = { step, nodeId: p.id, type: p.type, ms: elapsed(t0), inputs: summarizePorts(inputs), error: message };
        resolveNode(i, false);
      };

      const succeed = (i: number, inputs: Record<string, unknown>, t0: number, full: NodeOutputs): void => {
        const p = plans[i]!;
        const reserved = takeReserved(full);
        if (typeof reserved === 'string') {
          fail(i, inputs, t0, reserved);
          return;
        }
        const out = reserved.out;
        if (reserved.events) stepEvents[i] = reserved.events.map((e) => ({ step, nodeId: p.id, ...e }));
        if (reserved.ending) stepEndings[i] = reserved.ending;
        if (reserved.nonFinite) nonFinite[i] = reserved.nonFinite;
        outputs[i] = out;
        if (out.done === true) done = true;
        for (const e of p.outputs) {
          if (this.sinks.has(e.node)) {
            const v = out[e.fromPort];
            if (v !== undefined) this.deliver(e.node, e, v, p.id, step, reserved.nonFinite);
          }
        }
        if (logEntries) {
          logEntries[i] = {
            step,
            nodeId: p.id,
            type: p.type,
            ms: elapsed(t0),
            inputs: summarizePorts(inputs),
            outputs: summarizePorts(reserved.ending ? { ...out, [ENDING_OUTPUT]: reserved.ending } : out),
          };
        }
        // A node that ends the episode feeds nothing more this iteration (its graphOut values are already recorded).
        resolveNode(i, reserved.ending === undefined);
      };

      const start = (i: number): void => {
        const p = plans[i]!;
        if (blocked[i]) {
          resolveNode(i, false);
          return;
        }
        const inputs = gather(p);
        if (!p.resolved) {
          // graphOut: its inputs were recorded as they were delivered.
          if (logEntries) logEntries[i] = { step, nodeId: p.id, type: p.type, ms: 0, inputs: summarizePorts(inputs) };
          resolveNode(i, true);
          return;
        }
        const t0 = logEntries ? performance.now() : 0;
        let call: Promise<NodeOutputs>;
        try {
          call = p.resolved.invoke(
            {
              inputs,
              config: p.config,
              ctx: { ...this.o.context, step, stepBudget: this.o.stepBudget, nodeId: p.id },
              signal: this.internal.signal,
            },
            p.url,
          );
        } catch (err) {
          call = Promise.reject(err);
        }
        // Let go of in the call's own handlers below (a second pair of handlers per call would cost a promise).
        const watched = this.watch?.start(p.id, step, () => !settled);
        call.then(
          (out) => {
            if (watched) this.watch?.done(watched);
            if (settled) return;
            if (!isOutputsObject(out)) {
              fail(
                i,
                inputs,
                t0,
                `returned ${out === null ? 'null' : Array.isArray(out) ? 'an array' : typeof out} instead of an object of outputs`,
              );
              return;
            }
            if (!p.hasErrorPort && typeof out.error === 'string') {
              fail(i, inputs, t0, out.error);
              return;
            }
            const extracted = this.extractAssets(p, step, out);
            if (!extracted.pending) {
              succeed(i, inputs, t0, extracted.out);
              return;
            }
            extracted.pending.then(
              () => {
                if (!settled) succeed(i, inputs, t0, extracted.out);
              },
              (err: unknown) => {
                if (!settled) fail(i, inputs, t0, boundMessage(`could not store an asset: ${errorMessage(err)}`));
              },
            );
          },
          (err: unknown) => {
            if (watched) this.watch?.done(watched);
            if (settled) return;
            const message = boundMessage(errorMessage(err));
            if ((err as { code?: unknown } | null)?.code === 'HOST_DIED') {
              if (logEntries)
                logEntries[i] = { step, nodeId: p.id, type: p.type, ms: elapsed(t0), inputs: summarizePorts(inputs), error: message };
              finish({ kind: 'crashed', error: `node "${p.id}" (${p.type}): ${message}` });
              // Calls still in flight in this iteration have nowhere to report.
              this.internal.abort(err);
              return;
            }
            fail(i, inputs, t0, message);
          },
        );
      };

      if (this.internal.signal.aborted) {
        finish({ kind: 'aborted', error: this.o.signal ? abortReason(this.o.signal) : 'aborted' });
        return;
      }
      for (const i of this.roots) {
        if (settled) break;
        start(i);
      }
    });

    for (const e of stepErrors) if (e) this.errors.push(e);
    if (logEntries && this.o.onFiring) for (const e of logEntries) if (e) this.o.onFiring(e);
    if (this.o.onEvent) for (const list of stepEvents) if (list) for (const e of list) this.o.onEvent(e);
    const ending = stepEndings.find((e) => e !== undefined);
    return ending ? { end, outputs, nonFinite, done, ending } : { end, outputs, nonFinite, done };
  }

  /** Records `v` as graphOut `sink`'s value on `e.toPort`, with where it came from and the notes on the port it left. */
  private deliver(sink: number, e: EdgePlan, v: unknown, nodeId: string, step: number, notes: NonFiniteNote[] | undefined): void {
    this.sinks.get(sink)!.set(e.toPort, v);
    const mine = notes?.filter((note) => note.port === e.fromPort);
    this.sinkSources.get(sink)!.set(e.toPort, { nodeId, step, notes: mine && mine.length > 0 ? mine : undefined });
  }

  /** Replaces each asset-valued port by `{ $assetRef }` and hands the bytes to onAsset. */
  private extractAssets(p: NodePlan, step: number, out: NodeOutputs): { out: NodeOutputs; pending?: Promise<unknown> } {
    let copy: NodeOutputs | undefined;
    let pending: Array<void | Promise<void>> | undefined;
    for (const port in out) {
      const v = out[port];
      if (!isAssetValue(v)) continue;
      const a = v.$asset;
      const name = this.namer.claim(p.id, step, port, typeof a.name === 'string' && a.name ? a.name : port);
      const mime = typeof a.mime === 'string' && a.mime ? a.mime : 'application/octet-stream';
      const data = Buffer.from(a.data, 'base64');
      this.assetRefs.push({ name, mime, bytes: data.length, nodeId: p.id, step });
      copy ??= { ...out };
      copy[port] = { $assetRef: name };
      if (this.o.onAsset) {
        try {
          pending ??= [];
          pending.push(this.o.onAsset({ name, mime, data, nodeId: p.id, step }));
        } catch (err) {
          pending ??= [];
          pending.push(Promise.reject(err));
        }
      }
    }
    if (!copy) return { out };
    return pending ? { out: copy, pending: Promise.all(pending) } : { out: copy };
  }
}

/**
 * Splits the reserved outputs `$events`, `$ending` and `$nonFinite` off a node's outputs; a
 * string when `$events` or `$ending` is malformed (a node error naming what is wrong).
 */
function takeReserved(
  out: NodeOutputs,
): { out: NodeOutputs; events?: Record<string, unknown>[]; ending?: NodeEnding; nonFinite?: NonFiniteNote[] } | string {
  if (!(EVENTS_OUTPUT in out) && !(ENDING_OUTPUT in out) && !(NON_FINITE_OUTPUT in out)) return { out };
  const { [EVENTS_OUTPUT]: events, [ENDING_OUTPUT]: ending, [NON_FINITE_OUTPUT]: notes, ...rest } = out;
  const result: { out: NodeOutputs; events?: Record<string, unknown>[]; ending?: NodeEnding; nonFinite?: NonFiniteNote[] } = { out: rest };
  // Information only: an entry that is not a note is left out, never a failure of the node.
  const nonFinite = Array.isArray(notes) ? notes.filter(isNonFiniteNote) : [];
  if (nonFinite.length > 0) result.nonFinite = nonFinite;
  if (events !== undefined) {
    if (!Array.isArray(events) || !events.every(isOutputsObject)) return `output ${EVENTS_OUTPUT} must be an array of objects`;
    result.events = events;
  }
  if (ending !== undefined && ending !== null) {
    const kind = isOutputsObject(ending) ? ending.kind : undefined;
    if (!NODE_ENDING_KINDS.includes(kind as NodeEnding['kind'])) {
      return `output ${ENDING_OUTPUT} must be { kind: ${NODE_ENDING_KINDS.map((k) => `"${k}"`).join(' | ')}, message? }, got ${boundMessage(JSON.stringify(ending))}`;
    }
    const message = (ending as { message?: unknown }).message;
    result.ending = { kind: kind as NodeEnding['kind'], ...(typeof message === 'string' ? { message: boundMessage(message) } : {}) };
  }
  return result;
}

function isNonFiniteNote(v: unknown): v is NonFiniteNote {
  if (!isOutputsObject(v)) return false;
  const { port, key, value } = v as { port?: unknown; key?: unknown; value?: unknown };
  return typeof port === 'string' && (key === undefined || typeof key === 'string') && NON_FINITE_TEXTS.includes(value as NonFiniteText);
}

/**
 * Why a graphOut value that is not a metric was left out, when the reason is a number JSON
 * cannot carry: the number itself (a call that did not cross as JSON), or the `null` it became,
 * as the notes of the port it left name it (`key`: an entry of the object on that port).
 */
function nonFiniteOf(v: unknown, notes: readonly NonFiniteNote[] | undefined, key?: string): NonFiniteText | undefined {
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
  if (v !== null || !notes) return undefined;
  return notes.find((n) => n.key === key)?.value;
}

const elapsed = (t0: number): number => Math.round((performance.now() - t0) * 1000) / 1000;
