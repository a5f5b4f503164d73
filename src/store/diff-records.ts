/**
 * Field-by-field differences between two episode records of the same episode, leaving out
 * what may differ between worker counts and machines: timing, placement and cost-of-serving
 * fields (a model cache hit or a retried 429 changes what an episode cost, not what it did).
 */
import type { AuditFieldDiff } from './audit-file.js';
import type { EpisodeRecord } from './types.js';

/** Top-level record fields left out: when and where an episode ran, and trace links. */
export const AUDIT_IGNORED_FIELDS: readonly string[] = ['workerId', 'durationMs', 'startedAt', 'finishedAt', 'traceId', 'spanId'];

/** Metrics left out: wall-clock latencies and the cost of serving a model call. */
export const isIgnoredMetric = (name: string): boolean => /latency/i.test(name) || name === 'llm_cache_hits' || name === 'llm_retries';

function walk(path: string, a: unknown, b: unknown, out: AuditFieldDiff[]): void {
  if (Object.is(a, b)) return;
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) walk(`${path}[${i}]`, a[i], b[i], out);
    return;
  }
  if (isObj(a) && isObj(b) && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) walk(path ? `${path}.${k}` : k, a[k], b[k], out);
    return;
  }
  out.push({ path, ...(a !== undefined ? { original: a } : {}), ...(b !== undefined ? { audit: b } : {}) });
}

/** Every differing field of the two records (ignored fields left out), in path order. */
export function diffRecords(original: EpisodeRecord, audit: EpisodeRecord): AuditFieldDiff[] {
  const strip = (r: EpisodeRecord): Record<string, unknown> => {
    const copy: Record<string, unknown> = { ...r };
    for (const f of AUDIT_IGNORED_FIELDS) delete copy[f];
    const metrics = Object.fromEntries(Object.entries(r.metrics ?? {}).filter(([k]) => !isIgnoredMetric(k)));
    return { ...copy, metrics };
  };
  const out: AuditFieldDiff[] = [];
  walk('', strip(original), strip(audit), out);
  return out;
}
