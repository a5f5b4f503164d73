/**
 * Fingerprints of the model keys, for processes that must redact a key without holding it (the
 * tools host, whose children run model-written code). A fingerprint is a key's length, a 31-bit
 * rolling hash with a random base, and a salted SHA-256: enough to find the key in a text (the
 * rolling hash finds candidates in one pass, the SHA-256 confirms them), far too little to
 * recover it. The process that reads the keys publishes them in EVAL_SECRET_FINGERPRINTS, which
 * its children inherit.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';

/** The variable the fingerprints travel in (JSON). */
export const SECRET_FINGERPRINTS_ENV = 'EVAL_SECRET_FINGERPRINTS';
/** Shorter values are not fingerprinted: a salted hash of a short value could be searched for. */
export const MIN_FINGERPRINTED_LENGTH = 8;
/** Where a found secret was. */
export const REDACTED = '[redacted]';

const MOD = 2_147_483_647;

interface Fingerprint {
  /** Length in UTF-16 code units. */
  n: number;
  /** Rolling hash. */
  r: number;
  /** SHA-256 of salt + value, hex. */
  h: string;
}

interface Fingerprints {
  salt: string;
  /** Below 2^21, so that every product stays an exact integer under MOD. */
  base: number;
  keys: Fingerprint[];
}

function roll(text: string, base: number): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * base + text.charCodeAt(i)) % MOD;
  return h;
}

const sha = (salt: string, text: string): string => createHash('sha256').update(salt).update(text).digest('hex');

function parse(raw: string | undefined): Fingerprints | undefined {
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as Partial<Fingerprints>;
    if (typeof v.salt !== 'string' || typeof v.base !== 'number' || !Array.isArray(v.keys)) return undefined;
    const keys = v.keys.filter(
      (k): k is Fingerprint =>
        typeof k === 'object' &&
        k !== null &&
        Number.isInteger(k.n) &&
        k.n >= MIN_FINGERPRINTED_LENGTH &&
        typeof k.r === 'number' &&
        typeof k.h === 'string',
    );
    return { salt: v.salt, base: v.base, keys };
  } catch {
    return undefined;
  }
}

/** The fingerprints of `values` added to those in `prior` (same salt and base), as the JSON to publish. */
export function fingerprintSecrets(values: Iterable<string>, prior?: string): string {
  const fp = parse(prior) ?? { salt: randomBytes(16).toString('hex'), base: randomInt(257, 2 ** 21), keys: [] };
  for (const value of values) {
    if (value.length < MIN_FINGERPRINTED_LENGTH) continue;
    const h = sha(fp.salt, value);
    if (!fp.keys.some((k) => k.h === h)) fp.keys.push({ n: value.length, r: roll(value, fp.base), h });
  }
  return JSON.stringify(fp);
}

/** `text` with every occurrence of a fingerprinted secret replaced by REDACTED. */
function redactWith(fp: Fingerprints, text: string): string {
  let out = text;
  for (const n of new Set(fp.keys.map((k) => k.n))) {
    if (out.length < n) continue;
    const ofLength = fp.keys.filter((k) => k.n === n);
    let lead = 1;
    for (let i = 1; i < n; i++) lead = (lead * fp.base) % MOD;
    const hits: number[] = [];
    let h = roll(out.slice(0, n), fp.base);
    for (let i = 0; ; i++) {
      if (ofLength.some((k) => k.r === h)) {
        const digest = sha(fp.salt, out.slice(i, i + n));
        if (ofLength.some((k) => k.h === digest)) hits.push(i);
      }
      if (i + n >= out.length) break;
      h = (((h - ((out.charCodeAt(i) * lead) % MOD) + MOD) % MOD) * fp.base + out.charCodeAt(i + n)) % MOD;
    }
    if (hits.length === 0) continue;
    let result = '';
    let from = 0;
    for (const at of hits) {
      if (at < from) continue;
      result += out.slice(from, at) + REDACTED;
      from = at + n;
    }
    out = result + out.slice(from);
  }
  return out;
}

let cached: { raw: string | undefined; fp: Fingerprints | undefined } | undefined;

/** `text` with every secret fingerprinted in `env` (EVAL_SECRET_FINGERPRINTS) replaced; unchanged when there are none. */
export function redactFingerprinted(text: string, env: NodeJS.ProcessEnv = process.env): string {
  const raw = env[SECRET_FINGERPRINTS_ENV];
  if (cached === undefined || cached.raw !== raw) cached = { raw, fp: parse(raw) };
  const fp = cached.fp;
  return fp === undefined || fp.keys.length === 0 || text === '' ? text : redactWith(fp, text);
}
