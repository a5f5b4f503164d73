/**
 * A run's models as the API, the report and the CLI show them: what each model-backed node
 * asked (frozen in spec.json) beside what the provider said answered (manifest.json), and, on
 * a run with repeats, what the repeats of that node's answers are worth.
 */
import type { FrozenModel } from '../graph/model-setup.js';
import type { ReportedModel } from './reported-models.js';

export interface RunModel extends FrozenModel {
  /** What the provider said answered this node's calls, with how many; empty before any answer (or when none named a model). */
  reported: Array<Omit<ReportedModel, 'node'>>;
  /** On a run with repeats: whether each repeat asks the model again or gets the first repeat's answer. */
  repeatsNote?: string;
}

/**
 * At temperature 0 with the cache on (the default there), the repeat index is no part of the
 * cache key: every repeat gets the first repeat's answer, identical by construction. Above 0,
 * each repeat is its own call (the repeat index is in the key), so a repeat samples afresh.
 */
export function repeatsNoteOf(m: FrozenModel, repeats: number, cache: unknown): string | undefined {
  if (repeats <= 1) return undefined;
  const t = typeof m.sampling.temperature === 'number' ? m.sampling.temperature : 0;
  if (t > 0)
    return `temperature ${t}: each of the ${repeats} repeats asks the model for its own answer (the repeat is part of the cache key)`;
  if (cache === false)
    return `temperature 0 with the cache off: each repeat asks again; the answers differ only where the endpoint is not deterministic`;
  return `warning: temperature 0 with the cache on: the ${repeats} repeats get the same answer, identical by construction; they measure nothing of the model (set temperature > 0 to sample)`;
}

export function runModelsOf(
  models: readonly FrozenModel[] | undefined,
  reported: readonly ReportedModel[] | undefined,
  repeats: number,
  cacheOf: (node: string) => unknown = () => undefined,
): RunModel[] {
  return (models ?? []).map((m) => {
    const note = repeatsNoteOf(m, repeats, cacheOf(m.node));
    return {
      ...m,
      reported: (reported ?? []).filter((r) => r.node === m.node).map(({ node: _n, ...r }) => r),
      ...(note ? { repeatsNote: note } : {}),
    };
  });
}

/** "fake-1 at http://…/v1 (temperature=0, max_tokens=512); answered by fake-1 (fp_x) ×6": one line per node. */
export function describeRunModel(m: RunModel): string {
  const sampling = Object.entries(m.sampling)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');
  const answered = m.reported.map((r) => `${r.model}${r.systemFingerprint ? ` (${r.systemFingerprint})` : ''} ×${r.calls}`).join(', ');
  return `${m.node} (${m.type}): ${m.model} at ${m.baseUrl}${sampling ? ` (${sampling})` : ''}${answered ? `; answered by ${answered}` : ''}`;
}
