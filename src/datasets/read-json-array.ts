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
    const line = at ? lineAt(text, Number(at[1])) : undefined;
    throw new DatasetInvalidError({ file, ...(line !== undefined ? { line } : {}) }, `not valid JSON (${message})`);
  }
  if (!Array.isArray(value)) throw new DatasetInvalidError({ file, line: 1 }, 'a .json dataset file must hold one array of records');
  const lines = elementLines(text);
  return value.map((v, i) => ({ value: v, line: lines[i] ?? 1 }));
}

function lineAt(text: string, position: number): number {
  let line = 1;
  for (let i = 0; i < position && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The line each top-level array element starts on (the text is valid JSON by now). */
function elementLines(text: string): number[] {
  const out: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expecting = false;
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
      out.push(line);
      expecting = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth++;
      if (depth === 1) expecting = true;
    } else if (c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 1) expecting = true;
  }
  return out;
}
