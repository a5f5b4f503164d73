/**
 * The determinism audit: `auditRun` re-plays a seeded sample of a finished run's episodes at
 * another worker count and compares the records; `Run.audit` is its verdict (audit.json), and
 * `Run.auditOf` marks an audit's scratch run. See docs/audit.md.
 */
import { AUDIT_FIELDS_PER_EPISODE, settleAudit, startAudit } from '../audit/run-audit.js';
import { DEFAULT_AUDIT_SAMPLE, UNAUDITABLE_ENDINGS } from '../audit/audit-sample.js';
import { RUN_LIMITS } from '../spec/run-spec.js';
import { AUDIT_STATUSES, type AuditEpisodeDiff, type AuditFieldDiff, type AuditRecord, type AuditStatus } from '../store/audit-file.js';
import { AUDIT_IGNORED_FIELDS } from '../store/diff-records.js';
import { assertRunId, isValidRunId } from '../store/run-dir.js';
import { builder } from './builder.js';
import { RunRef } from './refs.js';
import { loadSpec, type RunSource } from './run-source.js';

const AuditStatusRef = builder.enumType('AuditStatus', {
  description: 'Where a determinism audit stands.',
  values: Object.fromEntries(
    AUDIT_STATUSES.map((s) => [
      s,
      {
        description: {
          RUNNING: 'Its scratch run is queued or running.',
          PASSED: 'Every sampled episode gave the same record (timing and placement fields left out).',
          FAILED: 'At least one sampled episode gave another record; `diffs` says where.',
          ERROR: 'Its scratch run did not complete (failed, cancelled, aborted, deleted); no verdict.',
        }[s],
      },
    ]),
  ) as Record<AuditStatus, { description: string }>,
});

const AuditFieldDiffRef = builder.objectRef<AuditFieldDiff>('AuditFieldDiff').implement({
  description: 'One field of an episode record that differs between the audited run and the audit.',
  fields: (t) => ({
    path: t.exposeString('path', { description: 'Where in the record, e.g. `metrics.spl`, `status`, `assets[0].bytes`.' }),
    original: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The value in the audited run (null: absent).',
      resolve: (d) => d.original ?? null,
    }),
    audit: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The value in the re-play (null: absent).',
      resolve: (d) => d.audit ?? null,
    }),
  }),
});

const AuditEpisodeDiffRef = builder.objectRef<AuditEpisodeDiff>('AuditEpisodeDiff').implement({
  description: 'An episode whose re-played record differs.',
  fields: (t) => ({
    index: t.exposeInt('index', { description: 'The run index of the episode.' }),
    episodeId: t.exposeString('episodeId', { description: "The env's id of the episode." }),
    fields: t.field({
      type: [AuditFieldDiffRef],
      description: `The first ${AUDIT_FIELDS_PER_EPISODE} differing fields, in path order.`,
      resolve: (d) => d.fields,
    }),
    moreFields: t.exposeInt('moreFields', { description: 'Differing fields not listed.' }),
  }),
});

const AuditErrorRef = builder.objectRef<{ code: string; message: string }>('AuditError').implement({
  description: 'Why an audit has no verdict.',
  fields: (t) => ({
    code: t.exposeString('code', { description: "The scratch run's error code, or its ending." }),
    message: t.exposeString('message', { description: 'What happened, in words.' }),
  }),
});

const RunAuditRef = builder.objectRef<AuditRecord>('RunAudit').implement({
  description: "A run's latest determinism audit (audit.json in its run directory).",
  fields: (t) => ({
    status: t.field({ type: AuditStatusRef, description: 'Where the audit stands.', resolve: (a) => a.status }),
    passed: t.boolean({
      nullable: true,
      description: 'True when every sampled episode gave the same record; null while running or without verdict.',
      resolve: (a) => (a.status === 'PASSED' ? true : a.status === 'FAILED' ? false : null),
    }),
    auditRunId: t.id({ description: 'The scratch run that re-played the sample.', resolve: (a) => a.auditRunId }),
    requestedAt: t.field({ type: 'DateTime', description: 'When the audit was asked for.', resolve: (a) => a.requestedAt }),
    finishedAt: t.field({ type: 'DateTime', nullable: true, description: 'When the verdict was made.', resolve: (a) => a.finishedAt }),
    sample: t.intList({ description: 'The run indices re-played, ascending (seeded from the run id).', resolve: (a) => a.sample }),
    workerCount: t.exposeInt('workerCount', { description: 'Workers the re-play used.' }),
    originalWorkerCount: t.exposeInt('originalWorkerCount', { description: 'Workers the audited run used.' }),
    episodesCompared: t.exposeInt('episodesCompared', { description: 'Sampled episodes whose records were compared.' }),
    diffs: t.field({
      type: [AuditEpisodeDiffRef],
      description: 'The episodes whose records differ (empty when passed).',
      resolve: (a) => a.diffs,
    }),
    error: t.field({ type: AuditErrorRef, nullable: true, description: 'Why there is no verdict.', resolve: (a) => a.error ?? null }),
    notes: t.stringList({
      description: 'How what the run was made from differs now without refusing the audit (project version, Node version).',
      resolve: (a) => a.notes,
    }),
  }),
});

builder.objectField(RunRef, 'audit', (t) =>
  t.field({
    type: RunAuditRef,
    nullable: true,
    description:
      'The latest determinism audit of this run (see auditRun); null when it was never audited. Read while running, it is compared as soon as its scratch run has ended.',
    resolve: (src: RunSource, _a, ctx) => (isValidRunId(src.row.id) ? settleAudit(ctx.outputsDir, src.row.id) : null),
  }),
);

builder.objectField(RunRef, 'auditOf', (t) =>
  t.id({
    nullable: true,
    description: "Set on an audit's scratch run: the run it re-plays a sample of.",
    resolve: async (src: RunSource, _a, ctx) => (await loadSpec(src, ctx))?.audit?.of ?? null,
  }),
);

builder.mutationFields((t) => ({
  auditRun: t.field({
    type: RunAuditRef,
    description: `Determinism audit: re-plays a seeded sample of a finished run's episodes (the same sample every time) at another worker count, with its frozen graph and seeds, as a scratch run queued like any other (named "audit of <run>", tagged "audit"), then compares the records field by field, leaving out ${AUDIT_IGNORED_FIELDS.join(', ')} and latency and cache metrics. Episodes that ended ${UNAUDITABLE_ENDINGS.join(', ')} are never sampled. Refused with AUDIT_MANIFEST_CHANGED (extensions.changes) when a nodeset's code or manifest or a dataset file differs from the run's manifest.json. An audit already running is answered as it stands. NOT_FOUND, BAD_USER_INPUT, CONFLICT (a run not finished, or one without frozen graph, manifest or auditable episode), QUEUE_FULL.`,
    args: {
      id: t.arg.id({ required: true, description: 'The run to audit.' }),
      sample: t.arg.int({
        description: `Episodes to re-play, 1..${RUN_LIMITS.maxEpisodes} (at most the run's auditable episodes). Default ${DEFAULT_AUDIT_SAMPLE}.`,
      }),
      workerCount: t.arg.int({
        description: `Workers of the re-play, 1..${RUN_LIMITS.maxWorkers}. Default 1 when the run used more, else 2.`,
      }),
    },
    resolve: (_root, args, ctx) => {
      const runId = String(args.id);
      assertRunId(runId);
      return startAudit(ctx.outputsDir, ctx.scheduler, runId, {
        sample: args.sample ?? undefined,
        workerCount: args.workerCount ?? undefined,
      });
    },
  }),
}));
