/** A JSON file holding one array of records; each record is located by the line its element starts on. */
import { DatasetInvalidError } from './dataset-invalid-error.js';
import type { RawRecord } from './raw-record.js';

export function readJsonArray(file: string, text: string): RawRecord[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const at = /position (\d+)/.exec(message);
    // Older engines give no position for some errors: the first element that does not parse alone is the culprit.
    const line = at ? lineAt(text, Number(at[1])) : elements(text).find((e) => !parses(text.slice(e.start, e.end)))?.line;
    throw new DatasetInvalidError({ file, ...(line !== undefined ? { line } : {}) }, `not valid JSON (${message})`);
  }
  if (!Array.isArray(value)) throw new DatasetInvalidError({ file, line: 1 }, 'a .json dataset file must hold one array of records');
  const spans = elements(text);
  return value.map((v, i) => ({ value: v, line: spans[i]?.line ?? 1 }));
}

function parses(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

function lineAt(text: string, position: number): number {
  let line = 1;
  for (let i = 0; i < position && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Each top-level array element: the line it starts on and its text span (by a scan that tracks strings and nesting only). */
function elements(text: string): Array<{ line: number; start: number; end: number }> {
  const out: Array<{ line: number; start: number; end: number }> = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expecting = false;
  const close = (i: number) => {
    const last = out[out.length - 1];
    if (last && last.end < 0) last.end = i;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') line++;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') continue;
    if (depth === 1 && expecting && c !== ']') {
      out.push({ line, start: i, end: -1 });
      expecting = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth++;
      if (depth === 1) expecting = true;
    } else if (c === ']' || c === '}') {
      if (depth === 1) close(i);
      depth--;
    } else if (c === ',' && depth === 1) {
      close(i);
      expecting = true;
    }
  }
  close(text.length);
  return out;
}
