/**
 * The one form model behind the New run and Play pages: the fields as the user types them,
 * their starting values (the server's declared defaults), and the parsing into each
 * operation's variables. Numbers the user typed go to the server as typed, so a refusal
 * names the field; blanks are omitted, so the server's default applies.
 */
import { DEFAULT_STEP_BUDGET } from '../../../src/core/types.js';
import type { VariablesOf } from '../api/graphql.js';
import type { InputFieldDefault } from '../api/inputDefaults.js';
import type { PLAY_EPISODE, START_EVAL } from '../api/queries.js';

export interface RunForm {
  graphName: string;
  episodeCount: string;
  workerCount: string;
  seed: string;
  stepBudget: string;
  priority: string;
  exclusiveGpu: boolean;
  viaSubprocess: boolean;
  marginalVramMb: string;
  dataset: string;
  split: string;
  episodeOffset: string;
  /** Plays of each episode (blank: 1). */
  repeats: string;
  /** JSON text of node id → config patch, checked by lib/overrides.ts. */
  overrides: string;
  /** Play only: the env episode to play. */
  index: string;
  /** Wall-clock limits and the memory budget (advanced). */
  perStepTimeoutSec: string;
  perCallTimeoutSec: string;
  memoryBudgetMb: string;
  /** The run's labels: a short name, comma-separated tags, a note. */
  name: string;
  tags: string;
  note: string;
  /** StartEvalInput fields the form has no input for, copied from a spec by Run again and sent as they are. */
  carried: Record<string, unknown>;
}

export type StartEvalInput = VariablesOf<typeof START_EVAL>['input'];
export type PlayVariables = VariablesOf<typeof PLAY_EPISODE>;
/** Checked overrides (lib/overrides.ts), null when none were given. */
export type OverridesValue = Record<string, Record<string, unknown>> | null;

/**
 * The form before the server's defaults are laid over it. Only what the schema leaves to the
 * user is chosen here: a small first batch (episodeCount is required) and the first episode to play.
 */
const BASE: RunForm = {
  graphName: '',
  episodeCount: '10',
  workerCount: '',
  seed: '',
  stepBudget: '',
  priority: '',
  exclusiveGpu: false,
  viaSubprocess: false,
  marginalVramMb: '',
  dataset: '',
  split: '',
  episodeOffset: '',
  repeats: '',
  overrides: '',
  index: '0',
  perStepTimeoutSec: '',
  perCallTimeoutSec: '',
  memoryBudgetMb: '',
  name: '',
  tags: '',
  note: '',
  carried: {},
};

/** The starting form: BASE with StartEvalInput's declared defaults (GraphQL literals) laid over it. */
export function initialRunForm(defaults: readonly InputFieldDefault[], graphName: string): RunForm {
  const form: RunForm = { ...BASE, graphName };
  const fields = form as unknown as Record<string, string | boolean>;
  for (const { name, defaultValue } of defaults) {
    if (defaultValue == null || name === 'graphName' || !(name in form)) continue;
    if (typeof fields[name] === 'boolean') fields[name] = defaultValue === 'true';
    else if (typeof fields[name] === 'string')
      fields[name] = defaultValue.startsWith('"') ? String(JSON.parse(defaultValue)) : defaultValue;
  }
  return form;
}

/**
 * The step budget box's placeholder: what the server plays when it is left blank. The env's
 * budget for each episode wins where the env gives one (gridnav's grows with the maze), then
 * the graph's `step_budget`, then the server's own default.
 */
export function stepBudgetPlaceholder(graphStepBudget: number | null | undefined): string {
  return `env or ${graphStepBudget ?? DEFAULT_STEP_BUDGET}`;
}

/** A number field as the API wants it: blank → omitted; anything else goes to the server to judge. */
function num(s: string): number | undefined {
  if (s.trim() === '') return undefined;
  const n = Number(s);
  // Not a number: sent as typed, for the server to refuse by the field's name.
  return Number.isFinite(n) ? n : (s as unknown as number);
}

/** A required number field: sent as typed even when blank, so the refusal names it. */
function requiredNum(s: string): number {
  return num(s) ?? (s as unknown as number);
}

const text = (s: string): string | undefined => s.trim() || undefined;

/** Comma-separated tags as a list; blank → omitted. */
function tagList(s: string): string[] | undefined {
  const tags = s
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  return tags.length > 0 ? tags : undefined;
}

export function toStartEvalInput(form: RunForm, overrides: OverridesValue): StartEvalInput {
  return {
    // Fields with an input below win over those carried from a spec.
    ...(form.carried as Partial<StartEvalInput>),
    graphName: form.graphName,
    // Blank is omitted: the server refuses the missing required field by its name.
    episodeCount: num(form.episodeCount) as number,
    workerCount: num(form.workerCount),
    seed: num(form.seed),
    stepBudget: num(form.stepBudget),
    priority: num(form.priority),
    exclusiveGpu: form.exclusiveGpu,
    viaSubprocess: form.viaSubprocess,
    marginalVramMb: num(form.marginalVramMb),
    episodeOffset: num(form.episodeOffset),
    repeats: num(form.repeats),
    dataset: text(form.dataset),
    split: text(form.split),
    overrides: overrides ?? undefined,
    perStepTimeoutSec: num(form.perStepTimeoutSec),
    perCallTimeoutSec: num(form.perCallTimeoutSec),
    memoryBudgetMb: num(form.memoryBudgetMb),
    name: text(form.name),
    tags: tagList(form.tags),
    note: text(form.note),
  };
}

/**
 * Run again: the form filled from a run's spec (every field it was started with) and its current
 * labels. Spec fields the form has no input for, but StartEvalInput takes (`inputFields`), are
 * carried over as they are; what the system added at submit (run id, frozen graph …) is not.
 */
export function formFromSpec(
  base: RunForm,
  spec: unknown,
  inputFields: readonly string[],
  labels: { name: string | null; tags: readonly string[]; note: string | null },
): RunForm {
  const s = typeof spec === 'object' && spec !== null && !Array.isArray(spec) ? (spec as Record<string, unknown>) : {};
  const form: RunForm = { ...base, carried: {} };
  const fields = form as unknown as Record<string, unknown>;
  for (const name of inputFields) {
    const v = s[name];
    if (v === undefined || v === null) continue;
    if (name === 'overrides') {
      form.overrides = Object.keys(v as object).length > 0 ? JSON.stringify(v, null, 2) : '';
    } else if (name === 'tags' || name === 'name' || name === 'note') {
      // the labels as they are now, below
    } else if (typeof fields[name] === 'boolean') {
      fields[name] = v === true;
    } else if (typeof fields[name] === 'string') {
      fields[name] = typeof v === 'string' ? v : JSON.stringify(v);
    } else {
      form.carried[name] = v;
    }
  }
  form.name = labels.name ?? '';
  form.tags = labels.tags.join(', ');
  form.note = labels.note ?? '';
  return form;
}

export function toPlayVariables(form: RunForm, overrides: OverridesValue): PlayVariables {
  return {
    graphName: form.graphName,
    index: requiredNum(form.index),
    seed: num(form.seed),
    stepBudget: num(form.stepBudget),
    overrides: overrides ?? undefined,
    dataset: text(form.dataset),
    split: text(form.split),
  };
}
