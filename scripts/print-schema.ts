/**
 * Prints the schema built by the pothos builder, types sorted, to schema/schema.graphql
 * (`npm run schema:print`). `--check` exits 1 when the committed file differs instead.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { PACKAGE_ROOT } from '../src/paths.js';
import { buildSchema } from '../src/resolvers/index.js';

export const SCHEMA_FILE = join(PACKAGE_ROOT, 'schema', 'schema.graphql');

export function printedSchema(): string {
  return printSchema(lexicographicSortSchema(buildSchema())) + '\n';
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const sdl = printedSchema();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(SCHEMA_FILE, 'utf8');
    } catch {
      // missing counts as stale
    }
    if (current !== sdl) {
      process.stderr.write(`${SCHEMA_FILE} is stale: run npm run schema:print\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(SCHEMA_FILE, sdl);
    process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
  }
}
