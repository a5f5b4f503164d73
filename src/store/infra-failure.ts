/**
 * The run's outcome when infrastructure failed under it: a run whose counted plays (all but
 * CANCELLED ones) ended INFRA_ERROR above its `maxInfraErrorRate` ends FAILED with code
 * INFRA_ERRORS, naming how many plays failed so and the first one's error, so a dead endpoint
 * never reads as a finished evaluation. Its records, and the means over the plays that did
 * answer, are kept as they are.
 */
import type { EpisodeStatus } from '../statuses.js';

/** The plays' shape this rule reads. */
export interface PlayEnding {
  index: number;
  status: EpisodeStatus | string;
  error?: string | null | undefined;
}

export const DEFAULT_MAX_INFRA_ERROR_RATE = 0;

/** The error the run ends with, or null when its INFRA_ERROR plays are within `maxRate`. */
export function infraFailureOf(
  plays: readonly PlayEnding[],
  maxRate: number = DEFAULT_MAX_INFRA_ERROR_RATE,
): { code: 'INFRA_ERRORS'; message: string } | null {
  let counted = 0;
  let failed = 0;
  let first: PlayEnding | undefined;
  for (const p of plays) {
    if (p.status === 'CANCELLED') continue;
    counted++;
    if (p.status !== 'INFRA_ERROR') continue;
    failed++;
    if (!first || p.index < first.index) first = p;
  }
  if (failed === 0 || failed / counted <= maxRate) return null;
  const allowed = maxRate > 0 ? ` (more than maxInfraErrorRate ${maxRate})` : '';
  return {
    code: 'INFRA_ERRORS',
    message: `${failed} of ${counted} plays ended INFRA_ERROR${allowed}; the first, play ${first!.index}: ${first!.error || 'no error recorded'}`,
  };
}
