/**
 * The shared vocabulary of the runtime: graph JSON, nodeset manifests, the handler
 * interface of JS/TS nodesets and the host protocol's messages.
 */
import type { EpisodeStatus } from '../statuses.js';
import type { ScoreEntry } from './score-entry.js';

// ---------------------------------------------------------------- graphs

export interface GraphNode {
  /** Unique within the graph; edges address ports as `id.port`. */
  id: string;
  /** `<nodeset>__<function>` (e.g. `env_gridnav__step`) or a built-in type such as `graphOut`. */
  type: string;
  /** Per-node configuration passed to the handler; a run's `overrides` patch it. */
  config?: Record<string, unknown>;
}

export interface GraphEdge {
  /** `nodeId.outputPort` */
  from: string;
  /** `nodeId.inputPort` */
  to: string;
  /** A loop edge carries its value into the next iteration instead of ordering this one. */
  loop?: boolean;
}

export interface GraphSpec {
  name: string;
  description?: string;
  /** Iterations per episode when neither the API nor the env says otherwise. */
  step_budget?: number;
  /** Wall-clock seconds per step when the run does not set its own (perStepTimeoutSec). */
  per_step_timeout_sec?: number;
  /** The metric listed first wherever metrics are listed, over what the nodesets declare (MetricRange.primary). */
  primary_metric?: string;
  /** Metric → which way is better, over what the nodesets declare (MetricRange.goal). */
  metric_goals?: Record<string, MetricGoal>;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** The node type that collects an episode's metrics at graph scope. */
export const GRAPH_OUT_TYPE = 'graphOut';
/** Used when neither the API, the env nor the graph gives a step budget. */
export const DEFAULT_STEP_BUDGET = 500;

// ---------------------------------------------------------------- nodesets

export type Parallelism = 'shared' | 'replicated';

export interface PortSpec {
  name: string;
  description?: string;
  /** An input that may be absent (e.g. the action at iteration 0 of a loop). */
  optional?: boolean;
  /**
   * On an output holding an object of metrics (routed to a graphOut's `metrics` port): the
   * values each key can take. A run's intervals stay inside them, and a metric whose range is
   * not [0, 1] is never read as a success rate (docs/statistics.md, Metric ranges).
   */
  metrics?: MetricRanges;
}

/** The values a metric can take: `min` ≤ value ≤ `max`; a bound left out is open. */
export interface MetricRange {
  min?: number;
  max?: number;
  /**
   * What a counted play that never produced the metric scores (docs/statistics.md, Which plays
   * count): a number (a scorer's `0`: an unanswered sample is a wrong one), or `exclude` (a
   * measurement such as latency: the play is left out of that metric and counted apart).
   * @default "exclude"
   */
  missing?: number | 'exclude';
  /** Which way is better: `max` (success, score, SPL) or `min` (steps, distance, latency, tokens); absent: neither is declared. */
  goal?: MetricGoal;
  /** The metric a user looks at first: listed first wherever metrics are listed. */
  primary?: boolean;
}

/** Which way a metric is better. */
export type MetricGoal = 'max' | 'min';

/** Metric name → its declared range (a port's declaration, a run's `metricRanges`). */
export type MetricRanges = Record<string, MetricRange>;

export interface FunctionSpec {
  name: string;
  description?: string;
  inputs: PortSpec[];
  outputs: PortSpec[];
  /** Served through the BatchedInferenceServer: concurrent calls with the same config coalesce. */
  batched?: boolean;
  /** Config keys the function understands, with defaults (shown in the dashboard's form). */
  config?: Record<string, ConfigKeySpec>;
  /** Set on a function backed by a model: which config keys say what model answers (frozen into a run at submit). */
  model?: ModelKeysSpec;
}

/**
 * The config keys of a model-backed function that describe "the model": at submit each is
 * resolved (the node's config, else the key's `env` variable, else its `default`) and frozen
 * into the run, so a retry or resume plays with the same model and a comparison can name it.
 */
export interface ModelKeysSpec {
  /** The key naming the model; a node that resolves no value for it is refused at submit. */
  name: string;
  /** The key holding the endpoint's base URL. */
  endpoint: string;
  /** Keys of the sampling parameters (temperature, top_p, max_tokens, seed…). */
  sampling: string[];
}

/** The JSON type a config value must have. */
export type ConfigValueType = 'number' | 'integer' | 'boolean' | 'string' | 'array' | 'object';

/** One config key of a function: graph validation refuses a value of another type or out of range. */
export interface ConfigKeySpec {
  default?: unknown;
  description?: string;
  /** @default the type of `default`; any value when neither is given */
  type?: ConfigValueType;
  /** Bounds of a number or integer, inclusive. */
  minimum?: number;
  maximum?: number;
  /** The only values the key takes (strings, numbers, booleans), whatever `type` says. */
  enum?: ReadonlyArray<string | number | boolean>;
  /**
   * Set only by the operator, in a graph file (graphs/ or the workspace overlay): a run's
   * overrides that set it are refused with OVERRIDE_NOT_ALLOWED (e.g. a tool's command). @default false
   */
  operatorOnly?: boolean;
  /**
   * A model endpoint's base URL: a run's overrides may only name one the server knows
   * (OPENAI_BASE_URL, else the OpenAI default, and EVAL_LLM_ENDPOINTS), else ENDPOINT_NOT_ALLOWED. @default false
   */
  knownEndpoint?: boolean;
  /** The environment variable (of the server, or of `evalctl run`) whose value stands in when the node's config has none. */
  env?: string;
}

export interface PanelFieldSpec {
  name: string;
  label?: string;
  /** Fields earlier in the cascade; changing one of them resets this field. */
  dependsOn?: string[];
  default?: string | number;
}

/** An env's episode picker: cascading fields (dataset → split → episode), actions, load. */
export interface PanelSpec {
  fields: PanelFieldSpec[];
  actions: string[];
}

/** Declared cost of one host process of this nodeset, used by admission before calibration exists. */
export interface ResourceSpec {
  ramMb?: number;
  vramMb?: number;
  /**
   * RAM each episode in flight holds in this nodeset beyond its host (a sandbox's processes),
   * counted once per worker for shared and replicated nodesets alike. @default 0
   */
  episodeRamMb?: number;
  /**
   * CPU cores one host uses while it works, for admission; of a replicated nodeset, per worker.
   * A latency-bound env (one that mostly waits) declares less than 1. @default 1
   */
  cores?: number;
}

export interface BatchingSpec {
  /** @default 16 */
  maxBatchSize?: number;
  /** The longest a call waits for batch mates while the model is free, from its queue's first arrival. @default 5 */
  maxQueueDelayMs?: number;
}

export interface NodesetManifest {
  name: string;
  version?: string;
  description?: string;
  parallelism: Parallelism;
  functions: FunctionSpec[];
  panel?: PanelSpec;
  resources?: ResourceSpec;
  batching?: BatchingSpec;
  /** JS module (relative to the manifest) exporting a `NodesetModule` as default. */
  module?: string;
  /** Or: a command (argv, relative paths resolved against the manifest's folder) that starts a host speaking the host protocol. */
  command?: string[];
  /**
   * Where an eval process serves this JS-module nodeset's hosts instead of a child process per
   * host (calls still cross as JSON). `true`: on the eval process's own thread, for handlers
   * that never block the thread for long, never exit the process, and keep their state per
   * `episodeKey`, since every worker's host of it shares one module instance. `"thread"`: each
   * host in a worker thread of its own, with its own module instance; blocking work runs beside
   * the other hosts and `process.exit` ends only that host. Not for modules that need a process
   * of their own (native addons that are not thread-safe, `process.chdir`, signal handlers).
   * @default false (a child process per host)
   */
  inProcess?: boolean | 'thread';
  /**
   * Its handlers call a model: its hosts are handed the model keys the server (or evalctl) read
   * at start (docs/llm.md, "Keys"). No other host, and no process a host starts, gets them.
   * @default false
   */
  modelKeys?: boolean;
  /**
   * Config keys that make this JS-module nodeset's handlers unsafe on the eval process's own
   * thread (`process.exit`, a call that may block for good). A run whose graph sets none of them
   * on any node calling the nodeset (absent, null, or the default of the function the node
   * calls) serves its hosts there, as `inProcess: true`; any other run, where `inProcess` says.
   */
  inlineUnless?: string[];
  /**
   * Config keys that make this JS-module nodeset's handlers spend CPU per call (a simulator's
   * compute, per-step rendering). Served on the eval process's thread all the same (a run whose
   * hosts all are plays in one lane per core: docs/throughput.md), but admission then counts the
   * nodeset's cores per worker, where an inline nodeset that only waits counts one core at most
   * with the others on that thread. As for `inlineUnless`, a key counts when a node sets it.
   */
  heavyWith?: string[];
  /**
   * A JS module (relative to the manifest) whose default export is a `NodesetPreflight`: the eval
   * process calls it once before a run's first episode with the nodes calling this nodeset, so a
   * dependency that does not answer (a model endpoint) fails the run at once rather than every
   * episode. Runs with `preflight: false` skip it.
   */
  preflight?: string;
}

// ---------------------------------------------------------------- handlers

/** What every handler call knows about where it runs. Nothing here depends on the worker or the clock. */
export interface CallContext {
  runSeed: number;
  episodeIndex: number;
  /** Derived from (runSeed, episodeIndex): the only source of randomness (see prng.ts). */
  seed: number;
  /** Iteration number, 0-based. */
  step: number;
  /** The episode's step budget: it ends after iteration `stepBudget − 1` at the latest (an env may draw its last picture then). */
  stepBudget?: number;
  /** Unique key of this episode's state in stateful hosts (`<runId>:<episodeIndex>`). */
  episodeKey: string;
  nodeId: string;
  /** Identifies the concurrent caller (e.g. `<runId>/w3`) so a batcher knows who is active. */
  callerId?: string;
  /** Which play of its episode this is (0-based) on a run with repeats; absent means 0. */
  repeat?: number;
  /** The run's episodes in flight: a hint for a shared limiter's starting level (llm), never an input to a result. */
  runInFlight?: number;
}

export interface NodeCallArgs {
  inputs: Record<string, unknown>;
  config: Record<string, unknown>;
  ctx: CallContext;
  signal?: AbortSignal;
}

export type NodeOutputs = Record<string, unknown>;
export type NodeFunction = (args: NodeCallArgs) => NodeOutputs | Promise<NodeOutputs>;
/** Row by row: output i depends only on row i (batch invariance). */
export type BatchedNodeFunction = (rows: NodeCallArgs[]) => NodeOutputs[] | Promise<NodeOutputs[]>;

export type PanelValues = Record<string, string | number>;

export interface PanelLoadResult {
  episodeId: string;
  scene?: string;
  instruction?: string;
  task?: string;
  /** The env's own step budget for this episode, when it has one. */
  stepBudget?: number;
  /** The dataset sample the episode plays (dataset envs). */
  sampleId?: string;
  /** The group the sample belongs to (its `metadata.cluster`), for per-group and clustered statistics. */
  cluster?: string;
}

export interface EnvPanelHandler {
  /** Allowed values of `field` given the values of the fields before it. */
  options(field: string, values: PanelValues): Array<string | number>;
  /**
   * Optional: the one of `options(field, values)` equal to `value` (the same value, or the same
   * text), else undefined, found without listing them all. For a field with many options (a
   * dataset's samples), where every episode's load would otherwise list and scan them.
   */
  option?(field: string, value: string | number, values: PanelValues): string | number | undefined;
  /** Creates the episode selected by `values` under `episodeKey` and describes it. */
  load(values: PanelValues, episodeKey: string): PanelLoadResult | Promise<PanelLoadResult>;
  /**
   * Optional: the expected work of the episode `values` select, in a unit proportional to its
   * play time (gridnav: its fewest actions). A run with more than one worker asks before it starts
   * and hands out the costliest episodes first, then balances the workers' sums of these prices,
   * so a long one does not start last and hold up the end. It changes which worker plays an
   * episode and when, never a result. Must not create state.
   */
  cost?(values: PanelValues): number;
}

/** Default export of a JS/TS nodeset module. */
/** One model endpoint a host calls, as its GET /stats shows it: the limit on calls in flight and how the endpoint answered. */
export interface EndpointStats {
  /** The base URL without credentials, query or fragment. */
  baseUrl: string;
  model: string;
  mode: 'adaptive' | 'fixed';
  /** Calls allowed in flight now. */
  level: number;
  floor: number;
  cap: number;
  inFlight: number;
  waiting: number;
  /** Calls answered (2xx) since the host started. */
  answered: number;
  /** 429 answers since the host started. */
  count429: number;
  /** 503 answers since the host started. */
  count503: number;
  /** The last Retry-After the endpoint sent, in ms, as honoured (at most a minute); null when it never sent one. */
  lastRetryAfterMs: number | null;
  /** How long new calls are still held for a Retry-After, in ms (0: not held). */
  pausedForMs: number;
  /** Callers (run ids) with a call in flight or waiting, or one in the last minute. */
  callers: string[];
}

/** An endpoint as the server shows it: which shared host calls it. */
export interface EndpointUse extends EndpointStats {
  /** The nodeset whose shared host calls it. */
  nodeset: string;
}

export interface NodesetModule {
  functions?: Record<string, NodeFunction>;
  batched?: Record<string, BatchedNodeFunction>;
  panel?: EnvPanelHandler;
  /** The model endpoints this host calls and their limits, for GET /stats. */
  endpoints?(): EndpointStats[];
  /** Drops keyed per-episode state. */
  evict?(episodeKey: string): void;
  /** Called once in the host before serving; `dir` is the nodeset's folder (for weights, data). */
  init?(opts: { dir: string; manifest: NodesetManifest }): void | Promise<void>;
  /**
   * For a module whose state belongs to one host (its run), not to the process: a host served on
   * the eval process's thread gets a module of its own from this (initialised, `init` is not
   * called again), where the others share the process's one instance. `env` is the host's
   * environment as a child process would see it (the run's `ACTIVE_WORKSPACE_DIR`).
   */
  forHost?(opts: { dir: string; manifest: NodesetManifest; env: Readonly<Record<string, string | undefined>> }): Promise<NodesetModule>;
}

/** One node a nodeset's preflight checks: its id, the function it calls and its config (overrides applied). */
export interface PreflightNode {
  id: string;
  function: string;
  config: Record<string, unknown>;
}

/**
 * A nodeset's check before a run's first episode: resolves when what the nodes depend on
 * answers, else rejects with an error naming what did not (a CodedError keeps its code; any
 * other becomes PREFLIGHT_FAILED). It must give up within a few seconds, or when `signal` aborts.
 */
export type NodesetPreflight = (nodes: PreflightNode[], opts: { env: NodeJS.ProcessEnv; signal: AbortSignal }) => Promise<void>;

// ---------------------------------------------------------------- assets

/** A node output value of this shape is written to the episode's assets/ and replaced by a reference. */
export interface AssetValue {
  $asset: { name: string; mime: string /** base64 */; data: string };
}
export interface AssetRef {
  name: string;
  mime: string;
  bytes: number;
  nodeId: string;
  step: number;
}
export const isAssetValue = (v: unknown): v is AssetValue =>
  typeof v === 'object' && v !== null && '$asset' in v && typeof (v as AssetValue).$asset?.data === 'string';

// ---------------------------------------------------------------- host protocol

/** The one line a host prints on stdout when it listens: `EVAL_HOST_READY {"port":1234}`. */
export const HOST_READY_PREFIX = 'EVAL_HOST_READY ';

export interface HostCallRequest {
  function: string;
  inputs: Record<string, unknown>;
  config: Record<string, unknown>;
  ctx: CallContext;
}
export type HostCallResponse = { outputs: NodeOutputs } | { error: string };

export interface HostHealth {
  ok: true;
  nodeset: string;
  tag: string | null;
  pid: number;
}

export interface PanelState {
  values: PanelValues;
  options: Record<string, Array<string | number>>;
}

// ---------------------------------------------------------------- executor results

export interface FiringLogEntry {
  step: number;
  nodeId: string;
  type: string;
  ms: number;
  /** Inputs/outputs with assets replaced by `{ $assetRef }` and long arrays elided. */
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  error?: string;
}

export interface NodeErrorEntry {
  nodeId: string;
  step: number;
  message: string;
}

export type MetricValue = number | string | boolean;

/** How the executor stopped; the runner maps it onto an EpisodeStatus. */
export type ExecutorEnding = 'completed' | 'budget_exhausted' | 'error' | 'aborted' | 'crashed' | 'infra_error';

/**
 * Reserved node outputs the executor acts on instead of passing downstream as data:
 * `$events` (an array of event objects for the episode's events.jsonl), `$ending`, and
 * `$nonFinite` (NonFiniteNote[]: the output numbers JSON could not carry, added by the host).
 */
export const EVENTS_OUTPUT = '$events';
export const ENDING_OUTPUT = '$ending';
export const NON_FINITE_OUTPUT = '$nonFinite';

/** A number JSON cannot carry (it writes each as `null`), by name. */
export type NonFiniteText = 'NaN' | 'Infinity' | '-Infinity';
export const NON_FINITE_TEXTS: readonly NonFiniteText[] = ['NaN', 'Infinity', '-Infinity'];

/** One output number a node returned as NaN or ±Infinity: the port's own value, or entry `key` of the object on the port. */
export interface NonFiniteNote {
  port: string;
  key?: string;
  value: NonFiniteText;
}

/** A metric a graphOut received as NaN or ±Infinity, so the episode does not report it (counted as excluded). */
export interface DroppedMetric {
  name: string;
  value: NonFiniteText;
  /** The node whose output carried it, and the iteration. */
  nodeId: string;
  step: number;
}

/** What a node may put in `$ending`: the episode ends after this iteration with this ending. */
export type NodeEndingKind = 'budget_exhausted' | 'infra_error';
export const NODE_ENDING_KINDS: readonly NodeEndingKind[] = ['budget_exhausted', 'infra_error'];
export interface NodeEnding {
  kind: NodeEndingKind;
  message?: string;
}

/** One line of an episode's events.jsonl: the node's event with the iteration and node that emitted it. */
export interface EpisodeEvent {
  step: number;
  nodeId: string;
  type?: string;
  [key: string]: unknown;
}

export interface ExecutorResult {
  ending: ExecutorEnding;
  /** Iterations fully run. */
  steps: number;
  /** Harvested from graph-scope graphOut nodes, also after an abort (partial). */
  metrics: Record<string, MetricValue>;
  nodeErrors: NodeErrorEntry[];
  assets: AssetRef[];
  /** Why it crashed (a host died) or aborted, when it did. */
  error?: string;
  /** Score entries received on graphOut ports named `score` (graphOuts in spec order); absent when none. */
  scores?: ScoreEntry[];
  /** Metrics left out because their value was NaN or ±Infinity, in harvest order; absent when none. */
  droppedMetrics?: DroppedMetric[];
}

/** A node type resolved to something callable. */
export interface ResolvedNodeType {
  type: string;
  nodeset: string;
  fn: FunctionSpec;
  /**
   * Calls the function. `url` routes a remote call to a specific host (a worker's tagged env
   * host); without it the nodeset's registered URL (or in-process module) is used.
   * Throws HostDiedError when the host is gone, any other error for a node failure.
   */
  invoke(args: NodeCallArgs, url?: string): Promise<NodeOutputs>;
}

export interface NodeTypeResolver {
  resolve(type: string): ResolvedNodeType | undefined;
  /** Known types, for "did you mean" hints in validation errors. */
  knownTypes?(): string[];
}

export type { EpisodeStatus };

/** What a provider said answered a node's model calls (store/reported-models.ts counts them). */
export interface ReportedModel {
  /** The node that called. */
  node: string;
  /** The model the provider named in its answer. */
  model: string;
  /** The provider's system_fingerprint; absent when it sent none. */
  systemFingerprint?: string;
  /** Answers with this model and fingerprint (cache hits included: they are that model's answers). */
  calls: number;
}
