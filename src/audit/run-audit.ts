/**
 * The determinism audit of a finished run: a seeded sample of its episodes is re-played at
 * another worker count, with its frozen graph and seeds, as a scratch run queued like any other
 * (it needs resources); once that run ends its records are compared with the run's, field by
 * field, and the verdict goes to the run's audit.json. The comparison is made when the scratch
 * run's end is seen, or at the next read of the audit (a server restarted meanwhile loses nothing).
 */
import { existsSync } from 'node:fs';
import { BadInputError, CodedError, ConflictError, NotFoundError, errorMessage } from '../errors.js';
import { AuditManifestChangedError } from './audit-errors.js';
import type { FrozenSubmit, SchedulerEvent } from '../scheduler/types.js';
import { effectiveWorkerCount } from '../spec/effective-workers.js';
import { RUN_LIMITS, runInputSchema, type RunInputFields } from '../spec/run-spec.js';
import { describeIndices } from '../spec/shards.js';
import { isTerminalRunStatus } from '../statuses.js';
import { readAuditRecord, writeAuditRecord, type AuditEpisodeDiff, type AuditRecord } from '../store/audit-file.js';
import { diffRecords } from '../store/diff-records.js';
import { readSpec, readSummary, runDirPath } from '../store/run-dir.js';
import { readRunManifest } from '../store/run-manifest.js';
import type { RunSpec, RunSummary } from '../store/types.js';
import { auditSample, DEFAULT_AUDIT_SAMPLE, UNAUDITABLE_ENDINGS } from './audit-sample.js';
import { checkRunManifest } from './manifest-check.js';

/** Differing fields kept per episode in audit.json (the count of the rest is kept too). */
export const AUDIT_FIELDS_PER_EPISODE = 20;

/** The scheduler as an audit uses it. */
export interface AuditScheduler {
  submit(fields: RunInputFields, frozen?: FrozenSubmit): Promise<RunSummary>;
  subscribe?(listener: (e: SchedulerEvent) => void): () => void;
}

export interface AuditOptions {
  /** Episodes to re-play. @default min(16, the run's auditable episodes) */
  sample?: number | undefined;
  /** Workers of the re-play. @default 1 when the run used more, else 2 */
  workerCount?: number | undefined;
}

/** Spec fields that are not the run's config: its labels and its place in a sweep or shard plan. */
const NOT_COPIED = new Set(['name', 'tags', 'note', 'sweepId', 'sweepPoint', 'shardSize', 'workerCount', 'maxInFlight']);

/** One audit start or settle at a time per run (a double click queues one scratch run). */
const busy = new Map<string, Promise<unknown>>();
function serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = busy.get(key) ?? Promise.resolve();
  const next = prev.catch(() => {}).then(fn);
  busy.set(key, next);
  void next
    .catch(() => {})
    .finally(() => {
      if (busy.get(key) === next) busy.delete(key);
    });
  return next;
}

function checkedCount(what: string, v: number | undefined, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isSafeInteger(v) || v < 1 || v > max) throw new BadInputError(`${what} must be an integer in 1..${max}, got ${v}`);
  return v;
}

/** The run's config as a submit input: every input field of its spec but its labels and its worker count. */
function configOf(spec: RunSpec): RunInputFields {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(runInputSchema.shape)) {
    const v = (spec as Record<string, unknown>)[key];
    if (v !== undefined && !NOT_COPIED.has(key)) out[key] = v;
  }
  return out as unknown as RunInputFields;
}

/**
 * Queues the audit of a finished run and records it in its audit.json (status RUNNING). An audit
 * already running for the run is answered as it stands. NOT_FOUND, BAD_USER_INPUT (an audit's
 * own scratch run, a bad sample or worker count), CONFLICT (a run not finished, without frozen
 * graph or manifest, with no auditable episode), AUDIT_MANIFEST_CHANGED, and submit's refusals.
 */
export function startAudit(outputsDir: string, scheduler: AuditScheduler, runId: string, opts: AuditOptions = {}): Promise<AuditRecord> {
  const runDir = runDirPath(outputsDir, runId);
  return serial(runDir, async () => {
    if (!existsSync(runDir)) throw new NotFoundError(`run "${runId}"`);
    const current = await settleAuditNow(outputsDir, runId);
    if (current?.status === 'RUNNING') return current;
    const sampleSize = checkedCount('sample', opts.sample, RUN_LIMITS.maxEpisodes);
    const askedWorkers = checkedCount('workerCount', opts.workerCount, RUN_LIMITS.maxWorkers);
    const spec = await readSpec(runDir);
    if (spec.audit) throw new BadInputError(`run ${runId} is the scratch run of an audit of run ${spec.audit.of}; audit that run instead`);
    const summary = await readSummary(runDir);
    if (!isTerminalRunStatus(summary.status))
      throw new ConflictError(`run ${runId} is ${summary.status}; only a finished run can be audited`);
    const graph = spec.graph;
    if (!graph) throw new ConflictError(`run ${runId} was recorded before graphs were frozen into spec.json; it cannot be re-played`);
    const recorded = await readRunManifest(runDir);
    if (!recorded) throw new ConflictError(`run ${runId} has no manifest.json, so nothing can tell whether its code changed since`);
    const eligible = summary.episodes.filter((r) => !UNAUDITABLE_ENDINGS.includes(r.status)).map((r) => r.index);
    if (eligible.length === 0)
      throw new ConflictError(
        `run ${runId} has no episode to audit: only episodes that did not end ${UNAUDITABLE_ENDINGS.join(', ')} can be re-played`,
      );
    const sample = auditSample(runId, eligible, sampleSize ?? DEFAULT_AUDIT_SAMPLE);
    const originalWorkerCount = effectiveWorkerCount(spec);
    const workerCount = askedWorkers ?? (originalWorkerCount > 1 ? 1 : 2);
    let notes: string[] = [];
    const started = await submitReplay(runId, () =>
      scheduler.submit(
        {
          ...configOf(spec),
          workerCount,
          name: `audit of ${runId}`,
          tags: ['audit'],
          note: `Determinism audit of run ${runId}: episodes ${describeIndices(sample)} re-played at ${workerCount} worker(s) (the run used ${originalWorkerCount}).`,
        },
        {
          graph,
          audit: { of: runId, indices: sample },
          check: async (nodesets, workspaceDir) => {
            notes = (await checkRunManifest(runId, recorded, spec, nodesets, workspaceDir)).notes;
          },
        },
      ),
    );
    const record: AuditRecord = {
      version: 1,
      runId,
      auditRunId: started.runId,
      status: 'RUNNING',
      requestedAt: new Date().toISOString(),
      finishedAt: null,
      sample,
      workerCount: Math.min(workerCount, sample.length),
      originalWorkerCount,
      episodesCompared: 0,
      diffs: [],
      notes,
    };
    await writeAuditRecord(runDir, record);
    follow(outputsDir, scheduler, record);
    return record;
  });
}

/**
 * The scratch run's submit. The frozen graph was valid at the run's submit, so a graph or dataset
 * that no longer resolves (a nodeset or dataset deleted, a port dropped from a manifest) means
 * what the run was made from changed: refused as such rather than as the user's bad input.
 */
async function submitReplay(runId: string, submit: () => Promise<RunSummary>): Promise<RunSummary> {
  try {
    return await submit();
  } catch (err) {
    if (err instanceof CodedError && (err.code === 'BAD_USER_INPUT' || err.code === 'GRAPH_INVALID'))
      throw new AuditManifestChangedError(runId, [
        { kind: 'nodeset_removed', message: `the run's frozen graph or dataset no longer resolves: ${err.message}` },
      ]);
    throw err;
  }
}

/** Settles the audit as soon as the scheduler says its scratch run ended. */
function follow(outputsDir: string, scheduler: AuditScheduler, record: AuditRecord): void {
  if (!scheduler.subscribe) return;
  const unsubscribe = scheduler.subscribe((e) => {
    if (e.type !== 'run' || e.runId !== record.auditRunId || !isTerminalRunStatus(e.summary.status)) return;
    unsubscribe();
    // A failure here is not lost: the next read of the audit settles it again.
    void settleAudit(outputsDir, record.runId, e.summary).catch(() => {});
  });
}

/**
 * The run's audit, compared and written down if its scratch run has ended meanwhile; null when
 * the run was never audited. `scratch` is the scratch run's final summary when the caller has it.
 */
export function settleAudit(outputsDir: string, runId: string, scratch?: RunSummary): Promise<AuditRecord | null> {
  return serial(runDirPath(outputsDir, runId), () => settleAuditNow(outputsDir, runId, scratch));
}

async function settleAuditNow(outputsDir: string, runId: string, scratch?: RunSummary): Promise<AuditRecord | null> {
  const runDir = runDirPath(outputsDir, runId);
  const record = await readAuditRecord(runDir);
  if (record?.status !== 'RUNNING') return record;
  let ended = scratch && isTerminalRunStatus(scratch.status) ? scratch : undefined;
  if (!ended) {
    const scratchDir = runDirPath(outputsDir, record.auditRunId);
    if (!existsSync(scratchDir)) {
      return finish(runDir, record, {
        error: { code: 'RUN_DIR_MISSING', message: `the audit's run ${record.auditRunId} was deleted before it ended` },
      });
    }
    const now = await readSummary(scratchDir).catch(() => null);
    if (!now || !isTerminalRunStatus(now.status)) return record;
    ended = now;
  }
  if (ended.status !== 'COMPLETED') {
    return finish(runDir, record, {
      error: {
        code: ended.error?.code ?? ended.status,
        message: `the audit's run ${record.auditRunId} ended ${ended.status}${ended.error ? `: ${ended.error.message}` : ''}; no verdict`,
      },
    });
  }
  const original = await readSummary(runDir);
  const before = new Map(original.episodes.map((r) => [r.index, r]));
  const after = new Map(ended.episodes.map((r) => [r.index, r]));
  const diffs: AuditEpisodeDiff[] = [];
  let compared = 0;
  for (const index of record.sample) {
    const a = before.get(index);
    const b = after.get(index);
    if (!a || !b) {
      diffs.push({
        index,
        episodeId: (a ?? b)?.episodeId ?? '',
        fields: [{ path: '(record)', original: a ? 'present' : 'missing', audit: b ? 'present' : 'missing' }],
        moreFields: 0,
      });
      continue;
    }
    compared++;
    const fields = diffRecords(a, b);
    if (fields.length > 0)
      diffs.push({
        index,
        episodeId: a.episodeId,
        fields: fields.slice(0, AUDIT_FIELDS_PER_EPISODE),
        moreFields: Math.max(0, fields.length - AUDIT_FIELDS_PER_EPISODE),
      });
  }
  return finish(runDir, record, { diffs, episodesCompared: compared });
}

async function finish(
  runDir: string,
  record: AuditRecord,
  outcome: { error: NonNullable<AuditRecord['error']> } | { diffs: AuditEpisodeDiff[]; episodesCompared: number },
): Promise<AuditRecord> {
  const done: AuditRecord =
    'error' in outcome
      ? { ...record, status: 'ERROR', error: outcome.error }
      : {
          ...record,
          status: outcome.diffs.length === 0 ? 'PASSED' : 'FAILED',
          diffs: outcome.diffs,
          episodesCompared: outcome.episodesCompared,
        };
  done.finishedAt = new Date().toISOString();
  try {
    await writeAuditRecord(runDir, done);
  } catch (err) {
    // The verdict still answers; the next read compares again and retries the write.
    done.notes = [...done.notes, `audit.json could not be written: ${errorMessage(err)}`];
  }
  return done;
}
