/** Every GraphQL document the dashboard sends is valid against the committed schema. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { documentText } from '../../web/src/api/client.js';
import { CANCEL_SWEEP, COMPARE_RUNS, FLIP_PAIR, GATE, SWEEP } from '../../web/src/api/compareQueries.js';
import * as inputDefaults from '../../web/src/api/inputDefaults.js';
import * as queries from '../../web/src/api/queries.js';

const schema = buildSchema(readFileSync(join(PACKAGE_ROOT, 'schema', 'schema.graphql'), 'utf8'));

// Both modules export documents only; the compare page's module exports fragments too, so its operations are named.
const documents = Object.entries({ ...queries, ...inputDefaults, COMPARE_RUNS, FLIP_PAIR, GATE, SWEEP, CANCEL_SWEEP });

describe('dashboard queries', () => {
  it('finds the documents', () => {
    expect(documents.length).toBeGreaterThan(10);
  });
  for (const [name, doc] of documents) {
    it(`${name} validates against schema/schema.graphql`, () => {
      // The text the client sends, parsed by graphql-js as the server parses it.
      const errors = validate(schema, parse(documentText(doc))).map((e) => e.message);
      expect(errors).toEqual([]);
    });
  }
});
