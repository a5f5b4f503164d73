// Writes web/src/api/graphql-env.d.ts, the schema's types for the dashboard's gql.tada documents,
// from schema/schema.graphql. With --check it writes nothing and exits 1 when the committed file
// is stale, so CI catches a schema change whose dashboard types were not regenerated.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateOutput } from '@gql.tada/cli-utils';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsconfig = join(root, 'web', 'tsconfig.json');
const committed = join(root, 'web', 'src', 'api', 'graphql-env.d.ts');

if (!process.argv.includes('--check')) {
  await generateOutput({ tsconfig, output: committed, silent: true });
  console.log(`wrote ${committed}`);
} else {
  const dir = await mkdtemp(join(tmpdir(), 'graphql-env-'));
  try {
    const fresh = join(dir, 'graphql-env.d.ts');
    await generateOutput({ tsconfig, output: fresh, silent: true });
    const [want, have] = await Promise.all([readFile(fresh, 'utf8'), readFile(committed, 'utf8').catch(() => '')]);
    if (want !== have) {
      console.error(`${committed} is stale against schema/schema.graphql: run \`node scripts/graphql-env.mjs\``);
      process.exitCode = 1;
    } else console.log('web/src/api/graphql-env.d.ts matches schema/schema.graphql');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
