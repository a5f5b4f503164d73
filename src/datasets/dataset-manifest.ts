/** `dataset.json`, optional in a dataset folder: its description, label set and field names. */
import { readFile } from 'node:fs/promises';
import { z } from '../core/zod.js';
import { DatasetInvalidError } from './dataset-invalid-error.js';

const SAMPLE_FIELDS = ['id', 'input', 'target', 'choices', 'metadata', 'split'] as const;

export const DatasetManifestSchema = z
  .object({
    description: z.string().optional(),
    /**
     * Targets are labels: either the label set (its order is the order of tables and the
     * confusion matrix; a target outside it is refused) or `true` to take the sorted set of targets.
     */
    labels: z.union([z.array(z.string().min(1)).min(1), z.literal(true)]).optional(),
    /** The split a run uses when it names none. @default `test` when present, else the first split */
    defaultSplit: z.string().min(1).optional(),
    /** Record keys to read the sample fields from, e.g. `{ "input": "question", "target": "answer" }`. */
    fields: z.partialRecord(z.enum(SAMPLE_FIELDS), z.string().min(1)).optional(),
  })
  .strict();

export type DatasetManifest = z.infer<typeof DatasetManifestSchema>;

export async function readDatasetManifest(file: string): Promise<DatasetManifest> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new DatasetInvalidError({ file }, `not valid JSON (${(err as Error).message})`);
  }
  const parsed = DatasetManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.');
    throw new DatasetInvalidError({ file, ...(field ? { field } : {}) }, issue.message);
  }
  return parsed.data;
}
