/** The dashboard's schema types (web/src/api/graphql-env.d.ts) are current with schema/schema.graphql. */
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';

describe('web/src/api/graphql-env.d.ts', () => {
  it('matches what gql.tada generates from schema/schema.graphql', async () => {
    const r = await execa('node', [join(PACKAGE_ROOT, 'scripts', 'graphql-env.mjs'), '--check'], {
      reject: false,
      all: true,
    });
    expect(r.all).toContain('matches');
    expect(r.exitCode).toBe(0);
  }, 60_000);
});
