/**
 * audit.json of a run directory: the run's latest determinism audit (`auditRun`): a seeded
 * sample of its episodes re-played at another worker count in a scratch run, and how the
 * records compared, field by field (timing and placement fields left out).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readJson, writeJsonAtomic } from './atomic.js';

export const AUDIT_FILE = 'audit.json';

/** RUNNING until the scratch run ends; PASSED or FAILED by the comparison; ERROR when the scratch run did not complete. */
export type AuditStatus = 'RUNNING' | 'PASSED' | 'FAILED' | 'ERROR';
export const AUDIT_STATUSES: readonly AuditStatus[] = ['RUNNING', 'PASSED', 'FAILED', 'ERROR'];

/** One field whose value differs between the audited run's record and the audit's. */
export interface AuditFieldDiff {
  /** Where in the record, e.g. `metrics.spl`, `assets[0].bytes`, `status`. */
  path: string;
  /** The value in the audited run (undefined: absent there). */
  original?: unknown;
  /** The value in the audit's re-play (undefined: absent there). */
  audit?: unknown;
}

export interface AuditEpisodeDiff {
  index: number;
  episodeId: string;
  /** The first differing fields, in path order. */
  fields: AuditFieldDiff[];
  /** Differing fields left out of `fields`. */
  moreFields: number;
}

export interface AuditRecord {
  version: 1;
  /** The audited run. */
  runId: string;
  /** The scratch run that re-played the sample. */
  auditRunId: string;
  status: AuditStatus;
  requestedAt: string;
  finishedAt: string | null;
  /** The run indices re-played, ascending (seeded from the run id: the same sample every time). */
  sample: number[];
  /** Workers the audit ran with (as the scratch run really used them). */
  workerCount: number;
  /** Workers the audited run used. */
  originalWorkerCount: number;
  /** Episodes compared (sampled episodes the audit finished). */
  episodesCompared: number;
  /** Episodes whose records differ, with their first differing fields. */
  diffs: AuditEpisodeDiff[];
  /** Why there is no verdict (the scratch run failed, was cancelled or aborted). */
  error?: { code: string; message: string };
  /** Differences to the audited run's manifest that do not refuse the audit (project version, Node version). */
  notes: string[];
}

export const writeAuditRecord = (runDir: string, record: AuditRecord) => writeJsonAtomic(join(runDir, AUDIT_FILE), record);

/** The run's audit.json, or null when it has none (or it is unreadable). */
export async function readAuditRecord(runDir: string): Promise<AuditRecord | null> {
  const path = join(runDir, AUDIT_FILE);
  if (!existsSync(path)) return null;
  try {
    const r = await readJson<AuditRecord>(path);
    return typeof r === 'object' && r !== null && typeof r.auditRunId === 'string' && Array.isArray(r.sample) ? r : null;
  } catch {
    return null;
  }
}
