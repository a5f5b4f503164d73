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
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
