/**
 * How a run's episodes ended, in words for a list: a run whose episodes failed is not a plain
 * "completed". Errors, crashes, timeouts and missing verdicts are problems (warning style);
 * running out of steps or being cancelled are ordinary endings, shown but not flagged.
 */
import { statusColor, type EpisodeStatus } from './statuses.js';

/** The colour of a run whose episodes ended with problems (the TIMEOUT orange), instead of its status's green. */
export const PROBLEM_COLOR = '#e8731c';

/** Endings that mean something went wrong with the episode rather than with the agent's score. */
export const PROBLEM_ENDINGS: readonly EpisodeStatus[] = ['ERROR', 'CRASHED', 'TIMEOUT', 'NO_VERDICT', 'INFRA_ERROR'];

/**
 * Each ending after its count, for one and for many. An ending that is also a run status says
 * "episode", so a cancelled run reads "cancelled · 2 episodes cancelled", not its status twice.
 */
const WORDS: Record<EpisodeStatus, [one: string, many: string]> = {
  COMPLETED: ['completed', 'completed'],
  BUDGET_EXHAUSTED: ['out of budget', 'out of budget'],
  TIMEOUT: ['timeout', 'timeouts'],
  ERROR: ['error', 'errors'],
  NO_VERDICT: ['no verdict', 'no verdict'],
  CRASHED: ['crashed', 'crashed'],
  CANCELLED: ['episode cancelled', 'episodes cancelled'],
  INFRA_ERROR: ['infrastructure failure', 'infrastructure failures'],
};

export interface EndingPart {
  status: EpisodeStatus;
  count: number;
  /** e.g. "10 errors". */
  text: string;
  problem: boolean;
}

/** The endings other than COMPLETED that occurred, problems first, each with its count. */
export function endingParts(counts: ReadonlyArray<{ status: EpisodeStatus; count: number }>): EndingPart[] {
  const parts = counts
    .filter((c) => c.count > 0 && c.status !== 'COMPLETED')
    .map((c) => {
      const [one, many] = WORDS[c.status];
      return {
        status: c.status,
        count: c.count,
        text: `${c.count} ${c.count === 1 ? one : many}`,
        problem: PROBLEM_ENDINGS.includes(c.status),
      };
    });
  return parts.sort((a, b) => Number(b.problem) - Number(a.problem));
}

/** Episodes that ended with a problem. */
export const problemCount = (counts: ReadonlyArray<{ status: EpisodeStatus; count: number }>): number =>
  counts.reduce((n, c) => n + (PROBLEM_ENDINGS.includes(c.status) ? c.count : 0), 0);

/** A run's colour: its status's, but the problem orange for a COMPLETED run whose episodes ended with problems (a FAILED run stays red). */
export const runColor = (status: string, counts: ReadonlyArray<{ status: EpisodeStatus; count: number }>): string =>
  status === 'COMPLETED' && problemCount(counts) > 0 ? PROBLEM_COLOR : statusColor(status);
