/** Every GraphQL document the dashboard sends is valid against the committed schema. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import * as queries from '../../web/src/api/queries.js';

const schema = buildSchema(readFileSync(join(PACKAGE_ROOT, 'schema', 'schema.graphql'), 'utf8'));

describe('dashboard queries', () => {
  for (const [name, doc] of Object.entries(queries)) {
    it(`${name} validates against schema/schema.graphql`, () => {
      const errors = validate(schema, parse(doc)).map((e) => e.message);
      expect(errors).toEqual([]);
    });
  }
});
