/** Bearer credentials: the API token and the hosts' secrets are read and compared the same way. */
import { timingSafeEqual } from 'node:crypto';

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive). */
export function bearerOf(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m ? m[1] : undefined;
}

/** Whether `given` is `expected`, compared in constant time. */
export function sameToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
