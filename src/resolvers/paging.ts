/** Offset/first paging arguments, checked with a message that names the bad value. */
import { BadInputError } from '../errors.js';

export interface Page {
  offset: number;
  first: number;
}

export function checkPage(
  what: string,
  offset: number | null | undefined,
  first: number | null | undefined,
  defaults: { first: number; max: number },
): Page {
  const o = offset ?? 0;
  const f = first ?? defaults.first;
  if (!Number.isInteger(o) || o < 0) throw new BadInputError(`${what}: offset must be an integer ≥ 0, got ${String(offset)}`);
  if (!Number.isInteger(f) || f < 1 || f > defaults.max) {
    throw new BadInputError(`${what}: first must be an integer from 1 to ${defaults.max}, got ${String(first)}`);
  }
  return { offset: o, first: f };
}

export const RUNS_PAGE = { first: 50, max: 500 } as const;
export const EPISODES_PAGE = { first: 100, max: 10_000 } as const;
export const LOG_PAGE = { first: 200, max: 2_000 } as const;
export const EVENTS_PAGE = { first: 200, max: 2_000 } as const;
