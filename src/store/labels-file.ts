/**
 * labels.json in a run dir: the run's name, tags and note as last edited. Absent until the first
 * edit; until then the labels given at start (spec.json) are the run's.
 */
import { join } from 'node:path';
import { labelsOf, parseRunLabels, type RunLabels } from '../spec/run-labels.js';
import { readJson, writeJsonAtomic } from './atomic.js';
import { FILES } from './run-dir.js';

export const LABELS_FILE = 'labels.json';

/** labels.json as written: the labels and when they were last edited. */
interface LabelsFile extends RunLabels {
  updatedAt: string;
}

/** Replaces the run's labels (atomically: a reader sees the old or the new ones, never half). */
export async function writeRunLabels(runDir: string, labels: RunLabels, now: Date = new Date()): Promise<void> {
  const file: LabelsFile = { ...labels, updatedAt: now.toISOString() };
  await writeJsonAtomic(join(runDir, LABELS_FILE), file);
}

/**
 * The run's labels: labels.json when it holds valid ones, else those in spec.json, else none.
 * Never throws: labels are for people, and a damaged file must not hide the run.
 */
export async function readRunLabels(runDir: string): Promise<RunLabels> {
  try {
    const raw = await readJson<Record<string, unknown>>(join(runDir, LABELS_FILE));
    delete raw.updatedAt;
    return parseRunLabels(raw);
  } catch {
    // missing or damaged: the labels given at start
  }
  try {
    const spec = await readJson<Record<string, unknown>>(join(runDir, FILES.spec));
    return parseRunLabels({ name: spec.name, tags: spec.tags, note: spec.note });
  } catch {
    return labelsOf({});
  }
}
