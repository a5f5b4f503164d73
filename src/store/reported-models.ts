/**
 * What the providers said answered a run's model calls: per node, the model each answer named
 * and its `system_fingerprint`, with how many calls did. Counted per episode from the events
 * that carry `reported_model` (an episode record's `reportedModels`), summed over the records
 * for the run's manifest. Sorted by node, model and fingerprint, so the counts read the same
 * whatever order the episodes finished in.
 */

import type { ReportedModel } from '../core/types.js';

export type { ReportedModel };

const keyOf = (r: Omit<ReportedModel, 'calls'>): string => `${r.node}\u0000${r.model}\u0000${r.systemFingerprint ?? ''}`;

function sorted(map: Map<string, ReportedModel>): ReportedModel[] {
  return [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
}

/** Counts the `reported_model` of events: add each event as it comes, then `list()`. */
export class ReportedModelTally {
  readonly #counts = new Map<string, ReportedModel>();

  add(event: { nodeId: string; [key: string]: unknown }): void {
    const model = event.reported_model;
    if (typeof model !== 'string' || model === '') return;
    const fp = event.system_fingerprint;
    this.addCount({ node: event.nodeId, model, ...(typeof fp === 'string' && fp !== '' ? { systemFingerprint: fp } : {}), calls: 1 });
  }

  addCount(r: ReportedModel): void {
    const key = keyOf(r);
    const had = this.#counts.get(key);
    if (had) had.calls += r.calls;
    else this.#counts.set(key, { ...r });
  }

  list(): ReportedModel[] {
    return sorted(this.#counts);
  }
}

/** The reported models of a set of episode records, summed. */
export function sumReportedModels(records: Iterable<{ reportedModels?: ReportedModel[] | undefined }>): ReportedModel[] {
  const tally = new ReportedModelTally();
  for (const r of records) for (const m of r.reportedModels ?? []) tally.addCount(m);
  return tally.list();
}
