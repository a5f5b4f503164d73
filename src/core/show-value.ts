import { isHiddenChar } from './hidden-chars.js';

/** A value as an error message quotes it: JSON, cut to 60 characters. */
export function showValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  // JSON writes these as null, which is not what was given (a flag's 1e400 parses to Infinity).
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  let text: string;
  try {
    text = JSON.stringify(v) ?? String(v);
  } catch {
    text = String(v);
  }
  return escapeHidden(text.length > 60 ? `${text.slice(0, 57)}…` : text);
}

/** A direction mark, override or isolate, or a C1 control, as `\uXXXX`: quoted back as it is, it would turn the message around. */
function escapeHidden(text: string): string {
  let out = '';
  for (const ch of text) {
    const c = ch.charCodeAt(0);
    // JSON has already escaped the C0 controls; these it leaves as they are.
    out += isHiddenChar(c, true) ? `\\u${c.toString(16).padStart(4, '0')}` : ch;
  }
  return out;
}
