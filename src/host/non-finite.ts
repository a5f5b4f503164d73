/**
 * NaN and ±Infinity in a node's outputs: JSON has no way to write them, so a host writes them as
 * `null` and names them in the reserved output `$nonFinite` (docs/host-protocol.md). The Node
 * host finds them in its handlers' outputs; a host in another language often writes the bare
 * tokens instead (Python's `json.dumps` does by default), which the client reads here.
 */
import { NON_FINITE_OUTPUT, type NonFiniteNote, type NonFiniteText } from '../core/types.js';

const textOf = (v: unknown): NonFiniteText | undefined =>
  typeof v !== 'number' || Number.isFinite(v) ? undefined : Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';

/**
 * The non-finite numbers of a node's outputs, as `$nonFinite` notes: a port's own value, or an
 * entry of a plain object on a port (what a graphOut takes as metrics). `textOfValue` says which
 * values are such numbers. Undefined when there is none, so the answer stays as it was.
 */
export function nonFiniteNotes(
  outputs: Record<string, unknown>,
  textOfValue: (v: unknown) => NonFiniteText | undefined = textOf,
): NonFiniteNote[] | undefined {
  const notes: NonFiniteNote[] = [];
  for (const port of Object.keys(outputs)) {
    const v = outputs[port];
    const own = textOfValue(v);
    if (own) notes.push({ port, value: own });
    else if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      for (const key of Object.keys(v)) {
        const inner = textOfValue((v as Record<string, unknown>)[key]);
        if (inner) notes.push({ port, key, value: inner });
      }
    }
  }
  return notes.length > 0 ? notes : undefined;
}

// A string no host sends: the bare tokens become it while parsing, then `null`.
const MARK = '\u0000\u0001non-finite:';
const TOKEN = /-?Infinity|NaN/y;

/**
 * A host's answer that JSON.parse refused, read again with bare `NaN`, `Infinity` and
 * `-Infinity` (outside strings) taken as numbers JSON cannot carry: written `null`, and named in
 * the answer's `$nonFinite` when it has `outputs` and names none itself. Undefined when the text
 * has no such token or is not JSON even then.
 */
export function parseWithNonFinite(text: string): unknown {
  let out = '';
  let from = 0;
  let inString = false;
  let found = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) {
      inString = true;
      continue;
    }
    if (c !== 45 /* - */ && c !== 73 /* I */ && c !== 78 /* N */) continue;
    TOKEN.lastIndex = i;
    const m = TOKEN.exec(text);
    if (!m) continue;
    out += text.slice(from, i) + JSON.stringify(MARK + m[0]);
    i += m[0].length - 1;
    from = i + 1;
    found = true;
  }
  if (!found) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(out + text.slice(from));
  } catch {
    return undefined;
  }
  const outputs = (body as { outputs?: unknown } | null)?.outputs;
  if (typeof outputs === 'object' && outputs !== null && !Array.isArray(outputs) && !(NON_FINITE_OUTPUT in outputs)) {
    const notes = nonFiniteNotes(outputs as Record<string, unknown>, markedText);
    if (notes) (outputs as Record<string, unknown>)[NON_FINITE_OUTPUT] = notes;
  }
  return withoutMarks(body);
}

function markedText(v: unknown): NonFiniteText | undefined {
  return typeof v === 'string' && v.startsWith(MARK) ? (v.slice(MARK.length) as NonFiniteText) : undefined;
}

function withoutMarks(v: unknown): unknown {
  if (markedText(v)) return null;
  if (Array.isArray(v)) return v.map(withoutMarks);
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = withoutMarks(o[k]);
  }
  return v;
}
