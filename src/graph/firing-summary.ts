/**
 * Keeps firing-log lines small: a value whose JSON would pass ~2 KB is replaced by a short
 * description of what it was.
 */

/** Values whose JSON would exceed this many characters are elided from the firing log. */
export const LOG_VALUE_LIMIT = 2048;

/** Characters kept of a node's error message in records and logs (it may quote a large value; every episode keeps a copy). */
export const ERROR_MESSAGE_LIMIT = 4096;

/** The message, cut past `limit` characters with a note of how much was left out. */
export function boundMessage(message: string, limit = ERROR_MESSAGE_LIMIT): string {
  return message.length <= limit ? message : `${message.slice(0, limit)}… (${message.length - limit} more characters)`;
}

/** A rough JSON size that stops counting once past `limit` (so a huge array costs little). */
function jsonSize(v: unknown, limit: number): number {
  switch (typeof v) {
    case 'string':
      return v.length + 2;
    case 'number':
      return 8;
    case 'boolean':
      return 5;
    case 'undefined':
      return 0;
    case 'object': {
      if (v === null) return 4;
      if (ArrayBuffer.isView(v)) return v.byteLength * 2;
      let size = 2;
      if (Array.isArray(v)) {
        for (const x of v) {
          size += jsonSize(x, limit - size) + 1;
          if (size > limit) return size;
        }
        return size;
      }
      for (const k in v) {
        size += k.length + 4 + jsonSize((v as Record<string, unknown>)[k], limit - size);
        if (size > limit) return size;
      }
      return size;
    }
    default:
      // bigint, function, symbol: not JSON.
      return Infinity;
  }
}

/** The value as the firing log shows it. */
export function summarizeValue(v: unknown, limit = LOG_VALUE_LIMIT): unknown {
  if (typeof v === 'string') return v.length > limit ? { $elided: 'string', length: v.length } : v;
  if (typeof v !== 'object' || v === null) {
    return typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol' ? { $elided: typeof v } : v;
  }
  if (ArrayBuffer.isView(v)) {
    const length = (v as unknown as { length?: number }).length ?? v.byteLength;
    return v.byteLength * 2 > limit ? { $elided: v.constructor.name, length } : Array.from(v as unknown as ArrayLike<number>);
  }
  if (jsonSize(v, limit) <= limit) return v;
  return Array.isArray(v) ? { $elided: 'array', length: v.length } : { $elided: 'object', keys: Object.keys(v).length };
}

/** Each port's value summarised; undefined ports left out. */
export function summarizePorts(ports: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in ports) {
    const v = ports[k];
    if (v !== undefined) out[k] = summarizeValue(v);
  }
  return out;
}
