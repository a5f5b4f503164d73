/** The cost of operations against the real schema (depth, aliases and tokens are tested through the app). */
import { parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/resolvers/index.js';
import { operationCost } from '../../src/resolvers/limits.js';

const schema = buildSchema();
const cost = (query: string, variables?: Record<string, unknown>) => {
  const doc = parse(query);
  return operationCost(schema, doc, doc.definitions[0] as OperationDefinitionNode, variables);
};

describe('operationCost', () => {
  it('counts one per field and multiplies what a paged field selects by its page size', () => {
    expect(cost('{ graphs { name } }')).toBe(2);
    expect(cost('{ runs(first: 10) { total items { id status } } }')).toBe(1 + 10 * (1 + 1 + 2));
    expect(cost('query($n: Int) { runs(first: $n) { items { id } } }', { n: 7 })).toBe(1 + 7 * 2);
  });

  it('uses the schema default when no page size is given, and follows fragments', () => {
    expect(cost('{ runs { items { id } } }')).toBe(1 + 50 * 2);
    expect(cost('{ runs(first: 2) { ...P } } fragment P on RunPage { items { id } }')).toBe(1 + 2 * 2);
  });

  it('multiplies nested pages', () => {
    expect(cost('{ runs(first: 10) { items { episodes(first: 100) { items { index } } } } }')).toBe(1 + 10 * (1 + (1 + 100 * (1 + 1))));
  });

  it('does not count introspection', () => {
    expect(cost('{ __schema { types { name fields { name } } } }')).toBe(0);
  });
});

describe('operationCost of nested fragments', () => {
  it('counts a fragment once however often it is spread, so doubling fragments take linear time', () => {
    const n = 40;
    let q = '{ runs(first: 1) { ...F0 } }';
    for (let i = 0; i < n; i++) q += ` fragment F${i} on RunPage { total ...F${i + 1} ...F${i + 1} }`;
    q += ` fragment F${n} on RunPage { total }`;
    // 2^41 − 1 fields: counting them one by one would never end.
    expect(cost(q)).toBe(1 + (2 ** (n + 1) - 1));
    expect(cost('{ runs(first: 3) { ...A ...A } } fragment A on RunPage { total ...B } fragment B on RunPage { items { id } }')).toBe(
      1 + 3 * 2 * (1 + 2),
    );
  });

  it('survives fragment cycles (reported by the standard rules)', () => {
    expect(() => cost('{ runs { ...A } } fragment A on RunPage { ...B } fragment B on RunPage { ...A }')).not.toThrow();
  });
});
