/**
 * Which episodes an audit re-plays: a sample seeded from the run id, so auditing a run again
 * re-plays the same episodes (and a failure can be reproduced), whoever asks and whenever.
 */
import { createHash } from 'node:crypto';
import { createPrng } from '../core/prng.js';
import type { EpisodeStatus } from '../statuses.js';

/** Episodes per audit unless asked otherwise. */
export const DEFAULT_AUDIT_SAMPLE = 16;

/**
 * Endings whose record may depend on the machine or on the outside (speed, a killed host, a
 * cancel, an unreachable endpoint): such an episode proves nothing about determinism.
 */
export const UNAUDITABLE_ENDINGS: readonly EpisodeStatus[] = ['TIMEOUT', 'CRASHED', 'CANCELLED', 'INFRA_ERROR'];

/** A 48-bit seed from the run id (a safe integer, as the PRNG wants). */
export function auditSeedOf(runId: string): number {
  return Number.parseInt(createHash('sha256').update(`audit:${runId}`).digest('hex').slice(0, 12), 16);
}

/** `n` of the eligible indices (all when n ≥ their count), ascending; the same for the same run id and list. */
export function auditSample(runId: string, eligible: readonly number[], n: number): number[] {
  const pool = [...eligible].sort((a, b) => a - b);
  const k = Math.min(n, pool.length);
  const prng = createPrng(auditSeedOf(runId));
  // A partial Fisher–Yates shuffle: the first k places are a uniform sample.
  for (let i = 0; i < k; i++) {
    const j = i + prng.int(pool.length - i);
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, k).sort((a, b) => a - b);
}
