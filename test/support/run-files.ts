/**
 * Reading what `evalctl run` leaves in an outputs folder, for tests: an episode's events.jsonl
 * and a byte search over every file (to prove a secret reached none of them).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Episode `index`'s events.jsonl of run `runId`, parsed. */
export async function readEvents(outputs: string, runId: string, index: number): Promise<Array<Record<string, unknown>>> {
  const file = join(outputs, 'eval_runs', runId, 'episodes', `ep${String(index).padStart(4, '0')}`, 'events.jsonl');
  return (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Every file under `dir` whose bytes contain `needle`. */
export async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    const path = join(dir, name);
    if ((await stat(path)).isFile() && (await readFile(path)).includes(needle)) hits.push(path);
  }
  return hits;
}
