/**
 * The run spec: what a user submits (`startEval`, `evalctl run`, Live Play), checked once by
 * one zod schema, and the spec.json a run directory holds. Every field's default and limit is
 * written here and nowhere else; everything past the entry points takes the parsed types.
 */
import { z } from '../core/zod.js';
import { graphSchema, MAX_PER_STEP_TIMEOUT_SEC, UNSAFE_KEYS } from '../graph/graph.js';
import { metricRangesSchema } from '../nodeset-registry/manifest.js';
import type { GraphSpec, MetricRanges } from '../core/types.js';
import { isHiddenChar } from '../core/hidden-chars.js';
import type { FrozenModel } from '../graph/model-setup.js';

/** One frozen model record: graph/model-setup.ts FrozenModel. */
const frozenModelSchema = z.strictObject({
  node: z.string().min(1),
  type: z.string().min(1),
  model: z.string().min(1),
  baseUrl: z.string(),
  sampling: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
});

/** The limits of a run spec. */
export const RUN_LIMITS = {
  /** Episodes per run. */
  maxEpisodes: 100_000,
  /** Parallel workers per run: each owns a host process per replicated nodeset. */
  maxWorkers: 64,
  /** Episodes in flight at once across a run (`maxInFlight`): each waits on I/O, not on a core of its own. */
  maxInFlight: 16_384,
  /** Admission priority runs from -maxPriority to maxPriority. */
  maxPriority: 1_000_000,
  /** Wall-clock seconds per step. */
  maxPerStepTimeoutSec: MAX_PER_STEP_TIMEOUT_SEC,
  /** Wall-clock seconds one host call may go unanswered. */
  maxPerCallTimeoutSec: 36_000,
  /** Characters in a graph name, a dataset, a split, a node id of an override. */
  maxNameChars: 200,
  /** Bytes of the overrides as JSON: config patches, not data (a run copies them into its files and sends them with every call). */
  maxOverridesBytes: 64 * 1024,
  /** Levels of objects and lists in the overrides, the outer object being one: config patches are shallow, and deeper JSON would overflow the stack of whatever reads it next. */
  maxOverridesDepth: 32,
  /** Characters in a run's name. */
  maxRunNameChars: 200,
  /** Tags per run, and characters per tag. */
  maxTags: 32,
  maxTagChars: 64,
  /** Characters in a run's note. */
  maxNoteChars: 10_000,
  /** Plays of each episode (`repeats`). */
  maxRepeats: 100,
} as const;

/** The defaults of the optional fields of a run spec. */
export const RUN_DEFAULTS = {
  workerCount: 1,
  seed: 0,
  perStepTimeoutSec: 2,
  priority: 0,
  exclusiveGpu: false,
  viaSubprocess: true,
  episodeOffset: 0,
} as const;

/** Episodes per shard without `shardSize` (scale-out): shard boundaries depend on the spec alone, never on the number of machines. */
export const DEFAULT_SHARD_SIZE = 16;

/** Without perCallTimeoutSec, one host call may take this many per-step allowances: a slow step is not cut, a frozen host is. */
export const PER_CALL_TIMEOUT_STEPS = 10;

const intIn = (min: number, max: number) => {
  const expected = {
    error:
      min === Number.MIN_SAFE_INTEGER && max === Number.MAX_SAFE_INTEGER
        ? 'must be a safe integer (at most 2^53 − 1 either side of 0)'
        : max === Number.MAX_SAFE_INTEGER
          ? `must be an integer ≥ ${min}`
          : `must be an integer in ${min}..${max}`,
  };
  return z.int(expected).min(min, expected).max(max, expected);
};

const positiveNumber = (max = Number.MAX_VALUE) => {
  const expected = { error: max === Number.MAX_VALUE ? 'must be a positive number' : `must be a positive number, at most ${max}` };
  return z.number(expected).positive(expected).max(max, expected);
};

/** A label's check: no character `isHiddenChar` names (a note's line breaks and tabs pass when `lines`). */
const visible = (lines = false) =>
  [
    (s: string) => {
      for (let i = 0; i < s.length; i++) if (isHiddenChar(s.charCodeAt(i), lines)) return false;
      return true;
    },
    { error: 'must not hold control or text-direction characters' },
  ] as const;

const name = (what: string) => {
  const expected = { error: `must be a non-empty ${what} of at most ${RUN_LIMITS.maxNameChars} characters` };
  return z
    .string(expected)
    .max(RUN_LIMITS.maxNameChars, expected)
    .refine((s) => s.trim() !== '', expected)
    .refine(...visible());
};

const bool = () => z.boolean({ error: 'must be true or false' });

/** JSON size in UTF-8 bytes, or undefined for a value JSON cannot hold. */
function jsonBytes(v: unknown): number | undefined {
  try {
    return Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * What is wrong with the shape of `v` as JSON: nesting past `maxDepth` levels, or an object that
 * holds itself (a YAML alias can build one). Iterative, so no nesting overflows the stack here.
 */
function shapeProblem(v: unknown, maxDepth: number): 'deep' | 'cycle' | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const path = new Set<object>([v]);
  const stack: Array<{ node: object; children: Iterator<unknown> }> = [{ node: v, children: Object.values(v).values() }];
  while (stack.length > 0) {
    const top = stack.at(-1)!;
    const next = top.children.next();
    if (next.done) {
      path.delete(top.node);
      stack.pop();
      continue;
    }
    const child = next.value;
    if (typeof child !== 'object' || child === null) continue;
    if (path.has(child)) return 'cycle';
    if (stack.length >= maxDepth) return 'deep';
    path.add(child);
    stack.push({ node: child, children: Object.values(child).values() });
  }
  return undefined;
}

/** A run's label fields: what tells it apart in a list. Set at start, editable afterwards (labels.json). */
export const runLabelFields = {
  /** A short human name, e.g. "planner eps 0.1". */
  name: z
    .string({ error: `must be a string of at most ${RUN_LIMITS.maxRunNameChars} characters` })
    .trim()
    .max(RUN_LIMITS.maxRunNameChars, { error: `must be at most ${RUN_LIMITS.maxRunNameChars} characters` })
    .refine(...visible())
    .optional(),
  /** Free-form tags to filter by; trimmed, blanks and repeats dropped. */
  tags: z
    .array(
      z
        .string({ error: 'must be strings' })
        .trim()
        .max(RUN_LIMITS.maxTagChars, { error: `each tag has at most ${RUN_LIMITS.maxTagChars} characters` })
        .refine(...visible()),
      { error: 'must be a list of strings' },
    )
    .transform((tags) => [...new Set(tags.filter((t) => t !== ''))])
    .refine((tags) => tags.length <= RUN_LIMITS.maxTags, { error: `must be at most ${RUN_LIMITS.maxTags} tags` })
    .optional(),
  /** What the run is for, what to look at: free text. */
  note: z
    .string({ error: `must be a string of at most ${RUN_LIMITS.maxNoteChars} characters` })
    .max(RUN_LIMITS.maxNoteChars, { error: `must be at most ${RUN_LIMITS.maxNoteChars} characters` })
    .refine(...visible(true))
    .optional(),
};

/** The first unsafe own key (graph.ts's UNSAFE_KEYS, which a parsed record would drop without a word) of `o` or of one of its object values, with its path. */
function unsafeKeyOf(o: unknown): { key: string; path: string[] } | undefined {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return undefined;
  for (const key of UNSAFE_KEYS) if (Object.hasOwn(o, key)) return { key, path: [] };
  for (const [id, patch] of Object.entries(o)) {
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) continue;
    for (const key of UNSAFE_KEYS) if (Object.hasOwn(patch, key)) return { key, path: [id] };
  }
  return undefined;
}

/** node id → config patch (merged into that node's config). */
export const overridesSchema = z
  .unknown()
  .superRefine((o, ctx) => {
    const unsafe = unsafeKeyOf(o);
    if (unsafe) {
      const what = unsafe.path.length === 0 ? 'node id' : 'config key';
      ctx.addIssue({ code: 'custom', message: `${what} ${JSON.stringify(unsafe.key)} is not allowed`, path: unsafe.path });
    }
  })
  .pipe(
    z.record(
      z.string().max(RUN_LIMITS.maxNameChars, { error: `node ids have at most ${RUN_LIMITS.maxNameChars} characters` }),
      z.record(z.string(), z.unknown(), { error: 'must be an object of config keys, e.g. {"epsilon": 0.2}' }),
      { error: 'must be an object of node id → config patch, e.g. {"agent": {"epsilon": 0.2}}' },
    ),
  )
  .superRefine((o, ctx) => {
    const shape = shapeProblem(o, RUN_LIMITS.maxOverridesDepth);
    if (shape !== undefined) {
      const limit = RUN_LIMITS.maxOverridesDepth;
      const message =
        shape === 'deep' ? `nests deeper than ${limit} levels of objects and lists` : 'holds itself (a cycle), which JSON cannot';
      ctx.addIssue({ code: 'custom', message, params: shape === 'deep' ? { limit, omitInput: true } : { omitInput: true } });
      return;
    }
    const bytes = jsonBytes(o);
    if (bytes === undefined) {
      ctx.addIssue({ code: 'custom', message: 'cannot be written as JSON', params: { omitInput: true } });
    } else if (bytes > RUN_LIMITS.maxOverridesBytes) {
      ctx.addIssue({
        code: 'custom',
        message: `must be at most ${RUN_LIMITS.maxOverridesBytes} bytes of JSON, got ${bytes} bytes`,
        params: { limit: RUN_LIMITS.maxOverridesBytes, omitInput: true },
      });
    }
  });

export type Overrides = z.output<typeof overridesSchema>;

const inputFields = {
  /** A saved graph (see `graphs`). */
  graphName: name('graph name'),
  /** Episodes to run. */
  episodeCount: intIn(1, RUN_LIMITS.maxEpisodes),
  /** Parallel workers; a speed dial, never a result dial. */
  workerCount: intIn(1, RUN_LIMITS.maxWorkers).default(RUN_DEFAULTS.workerCount),
  /**
   * Episodes in flight at once across the run, at least one per worker: each worker plays its
   * share of them at the same time where every node of the graph awaits I/O (a model call), one
   * at a time where a replicated env keeps per-worker state (docs/throughput.md, "In flight").
   * A speed dial, never a result dial. @default from the graph's placement (run-concurrency.ts)
   */
  maxInFlight: intIn(1, RUN_LIMITS.maxInFlight).optional(),
  /** Run seed; each episode's seed derives from it and the episode index. */
  seed: intIn(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER).default(RUN_DEFAULTS.seed),
  /** Steps per episode, overriding the env's and the graph's budget. */
  stepBudget: intIn(1, Number.MAX_SAFE_INTEGER).optional(),
  /** Wall-clock seconds allowed per step; an episode times out after budget × this. Unset: the graph's `per_step_timeout_sec`, else the default. */
  perStepTimeoutSec: positiveNumber(RUN_LIMITS.maxPerStepTimeoutSec).optional(),
  /** Wall-clock seconds one host call may go unanswered before its episode ends TIMEOUT; default perCallTimeoutSteps × perStepTimeoutSec. */
  perCallTimeoutSec: positiveNumber(RUN_LIMITS.maxPerCallTimeoutSec).optional(),
  /** Higher runs first; FIFO within a priority. */
  priority: intIn(-RUN_LIMITS.maxPriority, RUN_LIMITS.maxPriority).default(RUN_DEFAULTS.priority),
  /** Run alone: starts only when nothing runs, and nothing starts beside it. */
  exclusiveGpu: bool().default(RUN_DEFAULTS.exclusiveGpu),
  /** Declared extra VRAM (MB), used by admission until calibration exists. */
  marginalVramMb: z
    .number({ error: 'must be a non-negative number' })
    .nonnegative({ error: 'must be a non-negative number' })
    .max(Number.MAX_VALUE)
    .optional(),
  /** Stop the run (FAILED, OUT_OF_BUDGET) when its process tree exceeds this RSS (MB). */
  memoryBudgetMb: positiveNumber().optional(),
  /** false runs the batch inside the backend (same classes, same results). */
  viaSubprocess: bool().default(RUN_DEFAULTS.viaSubprocess),
  /** Config patches: node id → patch. */
  overrides: overridesSchema.default({}),
  /** Env panel dataset. */
  dataset: name('dataset name').optional(),
  /** Env panel split. */
  split: name('split name').optional(),
  /** Env episode index of the first episode; episode i plays env episode episodeOffset + i. */
  episodeOffset: intIn(0, Number.MAX_SAFE_INTEGER).default(RUN_DEFAULTS.episodeOffset),
  /** The sweep that queued this run (set by startSweep, not by users). */
  sweepId: z
    .string({ error: 'must be a sweep id' })
    .regex(/^sweep_\d{8}_\d{6}(_\d{1,4})?$/, { error: 'must be a sweep id' })
    .optional(),
  /** This run's point of its sweep's grid: "node.key" → value. */
  sweepPoint: z.record(z.string(), z.unknown(), { error: 'must be an object of "node.key" → value' }).optional(),
  ...runLabelFields,
  /** Episodes per shard when the run is spread over machines (`--shard`, `evalctl merge`); default DEFAULT_SHARD_SIZE. */
  shardSize: intIn(1, RUN_LIMITS.maxEpisodes).optional(),
  /**
   * Plays of each episode, each with its own derived seed (docs/statistics.md, Repeats);
   * absent means 1. The run then has episodeCount × repeats records.
   */
  repeats: intIn(1, RUN_LIMITS.maxRepeats).optional(),
  /**
   * The share of the run's counted plays (all but CANCELLED ones) that may end INFRA_ERROR
   * before the run ends FAILED with INFRA_ERRORS (docs/statistics.md); absent means 0: any
   * INFRA_ERROR play fails the run. 1 never fails it.
   */
  maxInfraErrorRate: z
    .number({ error: 'must be a number in [0, 1]' })
    .min(0, { error: 'must be a number in [0, 1]' })
    .max(1, { error: 'must be a number in [0, 1]' })
    .optional(),
  /**
   * Whether the nodesets the graph calls check what they depend on (a model endpoint) once
   * before the first episode, failing the run at once (PREFLIGHT_FAILED) when it does not
   * answer; absent means true.
   */
  preflight: bool().optional(),
  /**
   * Stop the run early (docs/statistics.md, "Stopping early"): the episodes are played in a
   * seeded permutation of the plan, and after each completed prefix of that order the run stops
   * once the anytime-valid comparison against the run `against` decides `requirements`
   * (`when: 'decided'`), or once the interval's half-width is at most `when.halfwidth`. The
   * episode count is the budget. Absent: the run plays every episode.
   */
  stopWhen: z
    .strictObject({
      /** The baseline run's id; its scores are frozen into the run directory at submit. */
      against: z
        .string({ error: 'must be a run id' })
        .regex(/^\d{8}_\d{6}(_\d{1,4})?$/, { error: 'must be a run id (YYYYMMDD_HHMMSS[_N])' })
        .optional(),
      /** `'decided'` (needs `against`), or `{ halfwidth: x }`: stop once the interval is at most ±x. */
      when: z.union([z.literal('decided'), z.strictObject({ halfwidth: positiveNumber() })], {
        error: 'must be "decided" or { halfwidth: x } with x > 0',
      }),
      /**
       * What candidate − baseline must meet, as the gate takes it (`success > 0`, `success >= -0.02`,
       * `|success| <= 0.02`); one requirement. @default the primary metric better than the baseline
       */
      requirements: z.array(name('requirement')).max(1, { error: 'takes one requirement: the run stops on one metric' }).optional(),
      /** The metric whose half-width a run without a baseline watches. @default the requirement's, else the primary metric */
      metric: name('metric name').optional(),
    })
    .refine((s) => s.when !== 'decided' || s.against !== undefined, {
      error: 'when "decided" compares against a baseline: set against to its run id (--against)',
      path: ['against'],
    })
    .optional(),
};

/** episodeCount × repeats plays must stay within maxEpisodes: the run has one record per play. */
function checkPlayCount(input: { episodeCount: number; repeats?: number | undefined }, ctx: z.RefinementCtx): void {
  const { episodeCount, repeats } = input;
  // Without repeats, or with a count already out of its own range, that field's own error says it all.
  if (repeats === undefined || !Number.isSafeInteger(episodeCount) || episodeCount > RUN_LIMITS.maxEpisodes) return;
  const plays = episodeCount * repeats;
  if (plays > RUN_LIMITS.maxEpisodes) {
    ctx.addIssue({
      code: 'custom',
      path: ['repeats'],
      message: `gives ${episodeCount} × ${repeats} = ${plays} plays; episodeCount × repeats must be at most ${RUN_LIMITS.maxEpisodes}`,
      params: { omitInput: true },
    });
  }
}

/** Each worker plays at least one episode at a time: fewer in flight than workers would leave some idle. */
function checkInFlight(input: { workerCount?: number | undefined; maxInFlight?: number | undefined }, ctx: z.RefinementCtx): void {
  const { workerCount, maxInFlight } = input;
  if (maxInFlight === undefined || workerCount === undefined || !Number.isSafeInteger(maxInFlight)) return;
  if (maxInFlight < workerCount) {
    ctx.addIssue({
      code: 'custom',
      path: ['maxInFlight'],
      message: `must be at least workerCount (${workerCount}): each worker plays at least one episode at a time, got ${maxInFlight}`,
      params: { omitInput: true },
    });
  }
}

/** What a user submits. Only graphName and episodeCount are required. */
export const runInputSchema = z.strictObject(inputFields).superRefine(checkPlayCount).superRefine(checkInFlight);
/** A submitted run as given (optional fields may be left out). */
export type RunInputFields = z.input<typeof runInputSchema>;
/** A submitted run, checked, with every default filled in. */
export type RunInput = z.output<typeof runInputSchema>;

/** spec.json: the checked input plus what the system adds at submit. Everything the eval process needs; never on argv. */
export const runSpecSchema = z.strictObject({
  ...inputFields,
  runId: z.string().min(1).max(64),
  createdAt: z.string(),
  /** Workspace overlay whose graphs/ and graph_nodes/ win over built-ins. */
  activeWorkspaceDir: z.string().optional(),
  /**
   * The graph the run evaluates, overrides applied, validated at submit: editing the graph
   * file later changes nothing. Absent only in specs written before it was frozen here.
   */
  graph: graphSchema.optional(),
  /**
   * The declared range of each metric the graph reports (graph/metric-ranges.ts), frozen at
   * submit with the graph: the run's intervals stay inside them. Absent in older specs.
   */
  metricRanges: metricRangesSchema.optional(),
  /**
   * The code-running tools (the python built-in, command tools) the graph offers, as
   * "node.tool": the operator allowed them (`--allow-code-tools`) and the run page says so.
   * Absent: none.
   */
  codeTools: z.array(z.string().max(RUN_LIMITS.maxNameChars)).optional(),
  /**
   * What each model-backed node asks (graph/model-setup.ts): model, endpoint and sampling,
   * resolved from config and environment at submit and frozen with the graph (whose node
   * configs hold the same values). Absent in older specs and for graphs without a model.
   */
  models: z.array(frozenModelSchema).optional(),
  /**
   * Set on a partial run: this directory holds only the shards of task `task` of `of`
   * (shards s with s mod of = task - 1), to be joined by `evalctl merge`.
   */
  shard: z
    .strictObject({ task: intIn(1, RUN_LIMITS.maxEpisodes), of: intIn(1, RUN_LIMITS.maxEpisodes) })
    .refine((s) => s.task <= s.of, { error: 'task must be at most of' })
    .optional(),
  /**
   * Set on a determinism audit's scratch run (`auditRun`): the run it re-plays and the run
   * indices it plays, with that run's frozen graph and seeds.
   */
  audit: z
    .strictObject({
      of: z.string().min(1).max(64),
      indices: z.array(intIn(0, RUN_LIMITS.maxEpisodes - 1)).min(1),
    })
    .optional(),
  /**
   * Set on one shard's copy of a run on a scale-out worker: the run indices this eval process
   * plays (the shard's episodes not yet committed on the head), each under its run index.
   */
  episodeIndices: z.array(intIn(0, Number.MAX_SAFE_INTEGER)).optional(),
});
export type RunSpec = z.output<typeof runSpecSchema>;

/** Live Play: one episode, `index` being the env episode. */
export const playInputSchema = z.strictObject({
  graphName: inputFields.graphName,
  /** The env episode to play (its index in the dataset split). */
  index: inputFields.episodeOffset.unwrap(),
  seed: inputFields.seed,
  overrides: inputFields.overrides,
  dataset: inputFields.dataset,
  split: inputFields.split,
  stepBudget: inputFields.stepBudget,
});
export type PlayInputFields = z.input<typeof playInputSchema>;
export type PlayInput = z.output<typeof playInputSchema>;

/**
 * Seconds allowed per step: the run's own value, else the graph's `per_step_timeout_sec` (a graph
 * whose step waits on a language model needs minutes, not the 2 s that suit a simulator), else
 * the default.
 */
export function perStepTimeoutSecOf(spec: Pick<RunInput, 'perStepTimeoutSec'>, graphSeconds?: number): number {
  return spec.perStepTimeoutSec ?? graphSeconds ?? RUN_DEFAULTS.perStepTimeoutSec;
}

/** Seconds one host call of this run may go unanswered. */
export function perCallTimeoutSecOf(spec: Pick<RunInput, 'perStepTimeoutSec' | 'perCallTimeoutSec'>, graphSeconds?: number): number {
  return spec.perCallTimeoutSec ?? PER_CALL_TIMEOUT_STEPS * perStepTimeoutSecOf(spec, graphSeconds);
}

/** The spec of a checked input: what the system adds at submit, the frozen graph among it. */
export function runSpecOf(
  input: RunInput,
  added: {
    runId: string;
    graph: GraphSpec;
    models?: readonly FrozenModel[] | undefined;
    metricRanges?: MetricRanges | undefined;
    activeWorkspaceDir?: string | undefined;
    createdAt?: string;
    /** The code-running tools the graph offers ("node.tool"). */
    codeTools?: readonly string[] | undefined;
  },
): RunSpec {
  return {
    ...input,
    runId: added.runId,
    createdAt: added.createdAt ?? new Date().toISOString(),
    ...(added.activeWorkspaceDir ? { activeWorkspaceDir: added.activeWorkspaceDir } : {}),
    graph: added.graph,
    ...(added.models && added.models.length > 0 ? { models: [...added.models] } : {}),
    ...(added.metricRanges && Object.keys(added.metricRanges).length > 0 ? { metricRanges: added.metricRanges } : {}),
    ...(added.codeTools && added.codeTools.length > 0 ? { codeTools: [...added.codeTools] } : {}),
  };
}

/** The one-episode run spec Live Play evaluates. */
export function playRunInput(play: PlayInput): RunInput {
  const { index, ...rest } = play;
  return runInputSchema.parse({ ...rest, episodeCount: 1, episodeOffset: index });
}
