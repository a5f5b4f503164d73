/**
 * Reads `<dir>/manifest.json` without the schema library, for the host process: its parent
 * validated the manifest already, and a host must start fast (eight of them at once for a
 * run with eight workers). `loadManifest` (manifest.ts) is the full validation.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BadInputError, errorMessage } from '../errors.js';
import type { NodesetManifest } from '../core/types.js';

export const MANIFEST_FILE = 'manifest.json';

/** The parsed JSON of `<dir>/manifest.json`; errors name the file. */
export async function readManifestJson(dir: string): Promise<{ file: string; raw: unknown }> {
  const file = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new BadInputError(`cannot read nodeset manifest ${file}: ${errorMessage(err)}`, { cause: err });
  }
  try {
    return { file, raw: JSON.parse(text) };
  } catch (err) {
    throw new BadInputError(`nodeset manifest ${file} is not valid JSON: ${errorMessage(err)}`, { cause: err });
  }
}

/** Reads a manifest checking only what a host needs to start: a name and a list of named functions. */
export async function readManifest(dir: string): Promise<NodesetManifest> {
  const { file, raw } = await readManifestJson(dir);
  const m = raw as Partial<NodesetManifest> | null;
  if (typeof m !== 'object' || m === null || typeof m.name !== 'string' || !Array.isArray(m.functions)) {
    throw new BadInputError(`invalid nodeset manifest ${file}: needs a "name" and a "functions" list`);
  }
  m.functions.forEach((f, i) => {
    if (typeof f?.name !== 'string' || !Array.isArray(f.inputs) || !Array.isArray(f.outputs)) {
      throw new BadInputError(`invalid nodeset manifest ${file}: functions[${i}] needs a "name", "inputs" and "outputs"`);
    }
  });
  return m as NodesetManifest;
}
