/**
 * Which endings count in a metric's mean. Partial results count: an episode that timed out,
 * errored, crashed or ran out of steps keeps what it measured, and that is what the agent scored.
 * Two endings are left out, because the episode was stopped for reasons outside the agent: a
 * cancel (CANCELLED) and a model provider that kept failing (INFRA_ERROR). Each metric reports
 * the episodes it left out by ending (`excluded`), so none is dropped silently.
 */
import { UNSCORED_ENDINGS } from '../statuses.js';

const LEFT_OUT: ReadonlySet<string> = new Set(UNSCORED_ENDINGS);

export const isCountedEnding = (status: string): boolean => !LEFT_OUT.has(status);
