/**
 * The metrics a comparison or a power plan asked for, checked against those the runs report: a
 * misspelt name would otherwise read as a row with no pairs, which looks like a result.
 */
import { BadInputError } from '../errors.js';

/** The distinct names asked for, in the order given; throws BAD_USER_INPUT naming any that no run reports. */
export function askedMetrics(asked: readonly string[], reported: Iterable<string>): string[] {
  const known = new Set(reported);
  const names = [...new Set(asked)];
  const unknown = names.filter((m) => !known.has(m));
  if (unknown.length > 0) {
    const list = [...known].sort();
    throw new BadInputError(
      `${unknown.length === 1 ? 'metric' : 'metrics'} ${unknown.map((m) => JSON.stringify(m)).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not reported by ${list.length > 0 ? `these runs; they report ${list.join(', ')}` : 'these runs, which report no metric'}`,
    );
  }
  return names;
}
