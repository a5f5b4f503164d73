/**
 * The order metrics are listed in everywhere a user reads them (compare, the run page, the
 * report, the CLI tables, the export): the primary metric first, then those with a declared
 * direction, then the rest, each group in code-unit order. Pure: the same names and
 * declarations give the same order on every machine.
 */
import type { MetricGoal, MetricRanges } from '../core/types.js';

const rankOf = (name: string, declared: MetricRanges | undefined): number => {
  const d = declared?.[name];
  if (d?.primary) return 0;
  return d?.goal !== undefined ? 1 : 2;
};

/** `names` in listing order (a new array). */
export function orderMetrics<T extends string>(names: readonly T[], declared: MetricRanges | undefined): T[] {
  return [...names].sort((a, b) => rankOf(a, declared) - rankOf(b, declared) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Aggregates (or anything naming a metric with its own `goal` and `primary`) in listing order
 * (a new array): the primary first, then those with a goal, each group keeping the order given
 * (summary.json lists them by name).
 */
export function orderAggregates<T extends { name: string; goal?: MetricGoal | undefined; primary?: boolean | undefined }>(
  items: readonly T[],
): T[] {
  const rank = (i: T): number => (i.primary ? 0 : i.goal !== undefined ? 1 : 2);
  return [...items].sort((a, b) => rank(a) - rank(b));
}
