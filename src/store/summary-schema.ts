/**
 * The shape of summary.json, checked on every read: a file that is valid JSON but not a
 * summary (fields missing, wrong types, another run's id) is refused with a coded error
 * instead of reaching the API half-filled.
 */
import { NON_FINITE_TEXTS } from '../core/types.js';
import { z } from '../core/zod.js';
import { CodedError } from '../errors.js';
import { metricRangesSchema } from '../nodeset-registry/manifest.js';
import { EPISODE_STATUSES, RUN_STATUSES } from '../statuses.js';
import type { EpisodeRecord, RunSummary } from './types.js';

/** summary.json is not a run summary (or not this run's). */
export class SummaryInvalidError extends CodedError {
  readonly problems: string[];
  constructor(source: string, problems: string[]) {
    super('SUMMARY_INVALID', `${source} is not a valid run summary: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

const count = z.number().int().nonnegative();
const isoDate = z.iso.datetime({ offset: true });
// JSON turns NaN and ±Infinity into null; the resolvers read such numbers as missing.
const number = z.number().nullable();

const metricAggregateSchema = z.object({
  name: z.string(),
  mean: number,
  count,
  stderr: number,
  min: number,
  max: number,
  ci95Low: number.optional(),
  ci95High: number.optional(),
  ciMethod: z.enum(['t', 'wilson', 'clustered-t', 'clustered-logit-t']).optional(),
  binary: z.boolean().optional(),
  clusters: count.optional(),
  clusteredStderr: number.optional(),
  excluded: z.record(z.string(), count).optional(),
  imputed: z.record(z.string(), count).optional(),
  goal: z.enum(['max', 'min']).optional(),
  primary: z.boolean().optional(),
  imputedValue: z.number().optional(),
  repeats: number.optional(),
  betweenVar: number.optional(),
  withinVar: number.optional(),
});

const scoreTargetSchema = z.union([z.string(), z.number(), z.array(z.string())]);
export const scoreEntrySchema = z.object({
  scorer: z.string(),
  value: z.number().min(0).max(1),
  answer: z.string().nullable(),
  extracted: z.string().nullable(),
  target: scoreTargetSchema.nullable(),
  choices: z.array(z.string()).optional(),
  explanation: z.string(),
  config: z.record(z.string(), z.unknown()).optional(),
  rescored: z.boolean().optional(),
});

export const episodeRecordSchema = z.object({
  index: count,
  episodeId: z.string(),
  status: z.enum(EPISODE_STATUSES),
  steps: count,
  metrics: z.record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()])),
  droppedMetrics: z.array(z.object({ name: z.string(), value: z.enum(NON_FINITE_TEXTS), nodeId: z.string(), step: z.number() })).optional(),
  seed: z.number(),
  workerId: z.number().int(),
  durationMs: z.number(),
  startedAt: z.string(),
  finishedAt: z.string(),
  task: z.string().optional(),
  scene: z.string().optional(),
  instruction: z.string().optional(),
  sampleId: z.string().optional(),
  cluster: z.string().optional(),
  repeat: count.optional(),
  stepBudget: z.number(),
  error: z.string().optional(),
  nodeErrors: z.array(z.object({ nodeId: z.string(), step: z.number(), message: z.string() })).optional(),
  assets: z.array(z.object({ name: z.string(), mime: z.string(), bytes: z.number(), nodeId: z.string(), step: z.number() })),
  scores: z.array(scoreEntrySchema).optional(),
  reportedModels: z
    .array(z.object({ node: z.string(), model: z.string(), systemFingerprint: z.string().optional(), calls: count }))
    .optional(),
  traceId: z.string().optional(),
  spanId: z.string().optional(),
});

/** Everything but the episode records, which are checked one by one (a watcher checks only new ones). */
const summaryHeadFields = {
  seq: count,
  runId: z.string(),
  status: z.enum(RUN_STATUSES),
  graphName: z.string(),
  episodeCount: count,
  repeats: count.optional(),
  workerCount: count,
  seed: z.number(),
  priority: z.number().int(),
  episodesDone: count,
  createdAt: isoDate,
  startedAt: isoDate.nullable(),
  finishedAt: isoDate.nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  metricRanges: metricRangesSchema.optional(),
  aggregateMetrics: z.array(metricAggregateSchema),
  aggregateByTask: z.record(z.string(), z.array(metricAggregateSchema)),
  statusCounts: z.partialRecord(z.enum(EPISODE_STATUSES), count),
  timedOut: z.boolean(),
  retiredWorkers: z.array(z.object({ workerId: z.number().int().nonnegative(), reason: z.string() })).optional(),
  stopWhen: z
    .object({
      rule: z.string(),
      metric: z.string(),
      requirement: z.string().nullable(),
      against: z.string().nullable(),
      read: count,
      interval: z.array(z.number()).nullable(),
      verdict: z.enum(['pass', 'fail', 'inconclusive']).nullable(),
      path: z.array(z.array(z.number())),
      stopped: z
        .object({
          reason: z.enum(['decided', 'halfwidth', 'budget']),
          atEpisode: count,
          planned: count,
          saved: count,
          fixedNPlan: count.nullable(),
        })
        .nullable(),
    })
    .optional(),
  pid: z.number().int().positive().optional(),
};

/** `episodes` is absent from a summary.json whose records are in records.jsonl (store/records-file.ts). */
const summaryHeadSchema = z.object({ ...summaryHeadFields, episodes: z.array(z.unknown()).optional() });
export const runSummarySchema = z.object({ ...summaryHeadFields, episodes: z.array(episodeRecordSchema) });

function formatIssues(error: z.ZodError): string[] {
  return error.issues.slice(0, 5).map((iss) => `${iss.path.map(String).join('.') || '(root)'}: ${iss.message}`);
}

/** What a caller knows about the file it read. */
export interface SummarySource {
  /** Names the file in the error, e.g. its path. */
  source: string;
  /** The run the file must belong to. */
  runId?: string;
  /**
   * Records already checked, by index: a record at a known index is taken from here instead of
   * being checked again (records never change once written), so a reader that follows a run
   * checks each record once.
   */
  known?: ReadonlyMap<number, EpisodeRecord>;
}

/** Checks parsed summary.json; throws SUMMARY_INVALID naming the first problems. */
export function parseSummary(json: unknown, { source, runId, known }: SummarySource): RunSummary {
  const head = summaryHeadSchema.safeParse(json);
  if (!head.success) throw new SummaryInvalidError(source, formatIssues(head.error));
  if (runId !== undefined && head.data.runId !== runId) {
    throw new SummaryInvalidError(source, [`runId: expected "${runId}", got "${head.data.runId}"`]);
  }
  const episodes: EpisodeRecord[] = [];
  const seen = new Set<number>();
  for (const [i, raw] of (head.data.episodes ?? []).entries()) {
    const index = (raw as { index?: unknown } | null)?.index;
    const have = typeof index === 'number' ? known?.get(index) : undefined;
    let record: EpisodeRecord;
    if (have) {
      record = have;
    } else {
      const parsed = episodeRecordSchema.safeParse(raw);
      if (!parsed.success)
        throw new SummaryInvalidError(
          source,
          formatIssues(parsed.error).map((p) => `episodes.${i}.${p}`),
        );
      // null metrics and aggregates are NaN or ±Infinity as JSON wrote them; readers treat them as missing.
      record = parsed.data as EpisodeRecord;
    }
    if (seen.has(record.index)) throw new SummaryInvalidError(source, [`episodes.${i}.index: episode ${record.index} appears twice`]);
    seen.add(record.index);
    episodes.push(record);
  }
  return { ...(head.data as Omit<RunSummary, 'episodes'>), episodes };
}

/** JSON text → summary; a syntax error is SUMMARY_INVALID too. */
export function parseSummaryText(text: string, where: SummarySource): RunSummary {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SummaryInvalidError(where.source, [`not JSON (${(err as Error).message})`]);
  }
  return parseSummary(json, where);
}
