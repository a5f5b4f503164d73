/**
 * What tells runs apart in a list: the config values that differ between the runs in view,
 * read from each run's spec (overrides flattened to `node.key`, and each model-backed node's
 * frozen model, endpoint and sampling as `llm.model`, `llm.base_url`, `llm.temperature` …), so ten
 * runs of a sweep show `agent.epsilon=0.1` … instead of ten identical rows, and two runs against
 * two models show `llm.model=…`.
 */
import { metricsOf } from './metrics.js';

/** Spec fields worth showing when they differ, in this order; overrides come after them. */
export const CONFIG_FIELDS: ReadonlyArray<readonly [key: string, label: string]> = [
  ['dataset', 'dataset'],
  ['split', 'split'],
  ['episodeCount', 'episodes'],
  ['episodeOffset', 'offset'],
  ['stepBudget', 'budget'],
  ['seed', 'seed'],
  ['repeats', 'repeats'],
];

export interface ConfigValue {
  /** `seed`, `dataset`, `agent.epsilon` … */
  key: string;
  label: string;
  /** The value as shown; `–` when the run does not set it. */
  text: string;
  /** From the spec's frozen models rather than the overrides: shown only where runs differ in it. */
  model?: true;
}

/** A spec's comparable config: the fields above and each override as `node.key`, values as display text. */
export function configOf(spec: unknown): Map<string, ConfigValue> {
  const s = metricsOf(spec);
  const out = new Map<string, ConfigValue>();
  for (const [key, label] of CONFIG_FIELDS) {
    if (s[key] !== undefined && s[key] !== null) out.set(key, { key, label, text: show(s[key]) });
  }
  for (const [node, patch] of Object.entries(metricsOf(s.overrides)).sort(([a], [b]) => a.localeCompare(b))) {
    for (const [k, v] of Object.entries(metricsOf(patch)).sort(([a], [b]) => a.localeCompare(b))) {
      const key = `${node}.${k}`;
      out.set(key, { key, label: key, text: show(v) });
    }
  }
  // The model each node asked, as resolved at submit: the effective value, whether an override or the environment set it.
  for (const m of Array.isArray(s.models) ? s.models : []) {
    const model = metricsOf(m);
    const node = typeof model.node === 'string' ? model.node : undefined;
    if (!node) continue;
    const values: Array<[string, unknown]> = [
      ['model', model.model],
      ['base_url', model.baseUrl],
      ...Object.entries(metricsOf(model.sampling)),
    ];
    for (const [k, v] of values) {
      if (v === undefined || v === null) continue;
      const key = `${node}.${k}`;
      out.set(key, { key, label: key, text: show(v), ...(out.has(key) ? {} : { model: true as const }) });
    }
  }
  return out;
}

function show(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * For each run (by id), the config values that are not the same in every run given. A lone run
 * shows its overrides (there is nothing to differ from, but they are what it was started with).
 */
export function configDiffs(runs: ReadonlyArray<{ id: string; spec?: unknown }>): Map<string, ConfigValue[]> {
  const configs = runs.map((r) => ({ id: r.id, config: configOf(r.spec) }));
  const keys = new Set<string>();
  for (const c of configs) for (const k of c.config.keys()) keys.add(k);
  const differing = [...keys].filter((k) => {
    if (configs.length < 2) return k.includes('.') && !configs[0]?.config.get(k)?.model;
    const first = configs[0]!.config.get(k)?.text;
    return configs.some((c) => c.config.get(k)?.text !== first);
  });
  const order = (k: string) => {
    const i = CONFIG_FIELDS.findIndex(([f]) => f === k);
    return i === -1 ? CONFIG_FIELDS.length : i;
  };
  differing.sort((a, b) => order(a) - order(b) || a.localeCompare(b));
  const out = new Map<string, ConfigValue[]>();
  for (const c of configs) {
    out.set(
      c.id,
      differing.map((k) => c.config.get(k) ?? { key: k, label: labelOf(k), text: '–' }),
    );
  }
  return out;
}

const labelOf = (k: string): string => CONFIG_FIELDS.find(([f]) => f === k)?.[1] ?? k;
