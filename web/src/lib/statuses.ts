/** The server's status lists (one `as const` list each, src/statuses.ts) with the colours the dashboard gives them. */
import {
  EPISODE_STATUSES,
  RUN_STATUSES,
  TERMINAL_RUN_STATUSES,
  UNSCORED_ENDINGS,
  type EpisodeStatus,
  type RunStatus,
} from '../../../src/statuses.js';

export { EPISODE_STATUSES, RUN_STATUSES, UNSCORED_ENDINGS, type EpisodeStatus, type RunStatus };

export const isLiveRun = (s: string): boolean => !(TERMINAL_RUN_STATUSES as readonly string[]).includes(s);

export const RUN_STATUS_COLORS: Record<RunStatus, string> = {
  QUEUED: '#7c8799',
  RUNNING: '#2f7de1',
  COMPLETED: '#23a26d',
  FAILED: '#d64545',
  CANCELLED: '#9a6b2f',
  ABORTED: '#8e3b8e',
};

export const EPISODE_STATUS_COLORS: Record<EpisodeStatus, string> = {
  COMPLETED: '#23a26d',
  BUDGET_EXHAUSTED: '#d9a21b',
  TIMEOUT: '#e8731c',
  ERROR: '#d64545',
  NO_VERDICT: '#8a94a6',
  CRASHED: '#8e3b8e',
  CANCELLED: '#9a6b2f',
  INFRA_ERROR: '#5b6b8c',
};

export function statusColor(status: string): string {
  return (RUN_STATUS_COLORS as Record<string, string>)[status] ?? (EPISODE_STATUS_COLORS as Record<string, string>)[status] ?? '#8a94a6';
}

export function episodeStatusColor(status: string): string {
  return (EPISODE_STATUS_COLORS as Record<string, string>)[status] ?? '#8a94a6';
}
