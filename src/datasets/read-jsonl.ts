/** JSON Lines: one JSON object per line; blank lines are skipped. */
import { DatasetInvalidError } from './dataset-invalid-error.js';
import type { RawRecord } from './raw-record.js';

export function readJsonl(file: string, text: string): RawRecord[] {
  const out: RawRecord[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new DatasetInvalidError({ file, line: i + 1 }, `not valid JSON (${(err as Error).message})`);
    }
    out.push({ value, line: i + 1 });
  }
  return out;
}
