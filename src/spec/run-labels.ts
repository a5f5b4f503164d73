/**
 * A run's labels (name, tags, note): what tells runs apart in a list. Given at start they are
 * spec fields; edited afterwards they live in the run dir's labels.json, which wins over the spec
 * so spec.json stays exactly what was submitted.
 */
import { z } from '../core/zod.js';
import { parseInput, type FieldLabels } from './parse-run-spec.js';
import { runLabelFields } from './run-spec.js';

export interface RunLabels {
  name?: string;
  tags: string[];
  note?: string;
}

export const runLabelsSchema = z.strictObject(runLabelFields);
export type RunLabelsInput = z.input<typeof runLabelsSchema>;

/** Checked labels: BAD_USER_INPUT naming the field when one is not a valid label. Blank name and note are absent. */
export function parseRunLabels(raw: unknown, labels: FieldLabels = {}): RunLabels {
  return labelsOf(parseInput(runLabelsSchema, raw, labels));
}

/** The labels of a spec (or of checked label fields); blank name and note count as none. */
export function labelsOf(fields: { name?: string | undefined; tags?: string[] | undefined; note?: string | undefined }): RunLabels {
  const name = fields.name?.trim();
  const note = fields.note?.trim() ? fields.note : undefined;
  return { ...(name ? { name } : {}), tags: fields.tags ?? [], ...(note ? { note } : {}) };
}

/** Does this run match a free-text search (id, graph, name, tags, note; case-insensitive)? */
export function matchesSearch(run: { id: string; graphName: string; labels?: RunLabels | undefined }, text: string): boolean {
  const needle = text.trim().toLowerCase();
  if (needle === '') return true;
  const hay = [run.id, run.graphName, run.labels?.name ?? '', run.labels?.note ?? '', ...(run.labels?.tags ?? [])];
  return hay.some((h) => h.toLowerCase().includes(needle));
}
