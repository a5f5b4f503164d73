/**
 * JobScheduler's options, their defaults, and their checks: a bad value fails at construction,
 * naming the option and what it got.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { BadInputError } from '../errors.js';
import { EVAL_PROCESS_MAIN } from '../paths.js';
import { ResourceSampler, type ResourceSource } from './admission/resource-sampler.js';
import type { GraphDirs } from './run-graph.js';
import type { SchedulerLogger } from './types.js';
import type { RemoteRuns } from './job/remote-runs.js';
import { runPolicyFromEnv, type RunPolicy } from '../spec/run-policy.js';

export interface JobSchedulerOptions {
  /** Holds `eval_runs/` and the catalog `db.json`. */
  outputsDir: string;
  /**
   * At start, retry every run the previous backend's stop interrupted (ABORTED because its
   * eval process lost the backend), playing only its unrecorded and stopped episodes (docs/retry.md). @default false
   */
  resumeInterrupted?: boolean;
  /** The backend's own URL, handed to each eval process (read at spawn, so it may be set after listen). */
  backendUrl: () => string;
  /** Queued runs accepted before submit fails with QUEUE_FULL. @default 1000 */
  queueCapacity?: number;
  /** Period of the tick; ticks also run right after a submit, a cancel and a child's exit. @default 1000 */
  tickIntervalMs?: number;
  /** A job passed over for this long reserves its resources, so later smaller jobs cannot starve it. @default 60000 */
  starvationMs?: number;
  /** Between SIGTERM and SIGKILL when cancelling a running run. @default 5000 */
  cancelGraceMs?: number;
  /** How long a shared host with no run using it stays loaded. @default 60000 */
  sharedHostIdleMs?: number;
  /** A shared host that runs are using and that has answered no /health for this long is killed and restarted (0: never). @default 60000 */
  sharedHostHungMs?: number;
  /**
   * A running run whose eval process has sent no heartbeat for this long (stopped, or its main
   * thread held by a call that never returns) is killed (SIGTERM, SIGKILL after `cancelGraceMs`)
   * and ends ABORTED with error code HUNG, its finished episodes kept (0: never). @default 60000
   */
  evalHungMs?: number;
  /** Capacity of the static ledger, used for a resource that cannot be measured (e.g. VRAM without an NVIDIA GPU). @default none: not a constraint */
  staticCapacity?: { ramMb?: number; vramMb?: number };
  /**
   * CPU cores admission shares out among runs (each run holds its core estimate while it runs).
   * @default os.availableParallelism()
   */
  cores?: number;
  /** Free RAM/VRAM and process-tree RSS. @default new ResourceSampler() */
  sampler?: ResourceSource;
  /** How often the RSS of each running eval process tree is sampled (calibration, memory budgets). @default 1000 */
  rssSampleIntervalMs?: number;
  /** The compiled eval process entry. @default EVAL_PROCESS_MAIN */
  evalProcessMain?: string;
  /** Workspace overlay for graphs and nodesets. @default process.env.ACTIVE_WORKSPACE_DIR */
  workspaceDir?: string;
  /** Built-in graphs folder. @default BUILTIN_GRAPHS_DIR */
  builtinGraphsDir?: string;
  /** Built-in nodesets folder. @default BUILTIN_NODESETS_DIR */
  builtinNodesetsDir?: string;
  /** @default lines on stderr prefixed `[scheduler]` */
  logger?: SchedulerLogger;
  /** Scale-out (`serve --redis`): admitted runs go to these workers, not to a local eval process. @default none */
  remote?: RemoteRuns;
  /**
   * Runs may offer code-running tools (the python built-in, command tools): the operator's switch,
   * `serve --allow-code-tools`; without it such a run is refused at submit (CODE_TOOLS_DISABLED).
   * @default false, unless EVAL_ALLOW_CODE_TOOLS=1 in the environment
   */
  allowCodeTools?: boolean;
}

/** The options checked, with every default filled in. */
export interface SchedulerSettings {
  outputsDir: string;
  backendUrl: () => string;
  queueCapacity: number;
  tickIntervalMs: number;
  starvationMs: number;
  cancelGraceMs: number;
  sharedHostIdleMs: number;
  sharedHostHungMs: number;
  evalHungMs: number;
  rssSampleIntervalMs: number;
  evalProcessMain: string;
  staticCapacity: { ramMb?: number; vramMb?: number };
  cores: number;
  sampler: ResourceSource;
  /** True when the sampler is the default one, which close() then stops. */
  ownsSampler: boolean;
  graphDirs: GraphDirs;
  log: SchedulerLogger;
  resumeInterrupted: boolean;
  remote: RemoteRuns | undefined;
  /** What a submitted run may ask (operator-only keys, known endpoints, code-running tools). */
  policy: RunPolicy;
}

const defaultLogger: SchedulerLogger = {
  info: (m) => process.stderr.write(`[scheduler] ${m}\n`),
  warn: (m) => process.stderr.write(`[scheduler] warning: ${m}\n`),
  error: (m) => process.stderr.write(`[scheduler] error: ${m}\n`),
};

export function resolveSchedulerOptions(options: JobSchedulerOptions): SchedulerSettings {
  if (!options || typeof options.outputsDir !== 'string' || options.outputsDir === '') {
    throw new BadInputError(`JobScheduler: outputsDir must be a folder path, got ${JSON.stringify(options?.outputsDir)}`);
  }
  if (typeof options.backendUrl !== 'function')
    throw new BadInputError('JobScheduler: backendUrl must be a function returning the backend URL');
  const positive = (name: string, v: number | undefined, def: number, allowZero = true): number => {
    const x = v ?? def;
    if (typeof x !== 'number' || !Number.isFinite(x) || x < 0 || (!allowZero && x === 0)) {
      throw new BadInputError(
        `JobScheduler: ${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got ${JSON.stringify(v)}`,
      );
    }
    return x;
  };
  const settings = {
    queueCapacity: positive('queueCapacity', options.queueCapacity, 1000, false),
    tickIntervalMs: positive('tickIntervalMs', options.tickIntervalMs, 1000, false),
    starvationMs: positive('starvationMs', options.starvationMs, 60_000),
    cancelGraceMs: positive('cancelGraceMs', options.cancelGraceMs, 5000),
    sharedHostIdleMs: positive('sharedHostIdleMs', options.sharedHostIdleMs, 60_000),
    sharedHostHungMs: positive('sharedHostHungMs', options.sharedHostHungMs, 60_000),
    evalHungMs: positive('evalHungMs', options.evalHungMs, 60_000),
    rssSampleIntervalMs: positive('rssSampleIntervalMs', options.rssSampleIntervalMs, 1000, false),
  };
  for (const k of ['ramMb', 'vramMb'] as const) {
    const v = options.staticCapacity?.[k];
    if (v !== undefined) positive(`staticCapacity.${k}`, v, 0);
  }
  return {
    outputsDir: options.outputsDir,
    backendUrl: options.backendUrl,
    ...settings,
    evalProcessMain: options.evalProcessMain ?? EVAL_PROCESS_MAIN,
    staticCapacity: { ...options.staticCapacity },
    cores: positive('cores', options.cores, availableParallelism(), false),
    sampler: options.sampler ?? new ResourceSampler(),
    ownsSampler: options.sampler === undefined,
    graphDirs: {
      // Absolute: eval processes start in their run's folder, where a relative path would name another place.
      workspaceDir: absoluteOrUndefined(options.workspaceDir ?? (process.env.ACTIVE_WORKSPACE_DIR || undefined)),
      builtinGraphsDir: options.builtinGraphsDir,
      builtinNodesetsDir: options.builtinNodesetsDir,
    },
    log: options.logger ?? defaultLogger,
    resumeInterrupted: options.resumeInterrupted === true,
    remote: options.remote,
    policy: runPolicyFromEnv(process.env, { allowCodeTools: options.allowCodeTools }),
  };
}

const absoluteOrUndefined = (dir: string | undefined): string | undefined => (dir === undefined ? undefined : resolve(dir));
