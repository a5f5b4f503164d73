/**
 * Which endings count in a metric's mean. An episode the agent finished (COMPLETED) or ran out
 * of steps in (BUDGET_EXHAUSTED: a failure of the agent, scored by the env) counts; any other
 * ending (TIMEOUT, ERROR, CRASHED, NO_VERDICT, CANCELLED, an infrastructure error) is left out
 * of every metric and reported apart, by ending, so none is dropped silently.
 */
const COUNTED: ReadonlySet<string> = new Set(['COMPLETED', 'BUDGET_EXHAUSTED']);

export const isCountedEnding = (status: string): boolean => COUNTED.has(status);
