/** Cost and depth of operations against the real schema. */
import { parse, validate, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/resolvers/index.js';
import { depthLimitRule, operationCost } from '../../src/resolvers/limits.js';

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

describe('depthLimitRule', () => {
  const errors = (query: string, max: number) => validate(schema, parse(query), [depthLimitRule(max)]).map((e) => e.message);

  it('allows operations up to the limit and names the depth of deeper ones', () => {
    expect(errors('{ runs { items { id } } }', 3)).toEqual([]);
    expect(errors('{ runs { items { episodes { total } } } }', 3)).toEqual(['the operation is nested 4 levels deep; the limit is 3']);
    expect(errors('query Deep { runs { ...A } } fragment A on RunPage { items { episodes { total } } }', 3)).toEqual([
      'operation "Deep" is nested 4 levels deep; the limit is 3',
    ]);
  });

  it('survives fragment cycles (reported by the standard rules)', () => {
    expect(() => errors('{ runs { ...A } } fragment A on RunPage { ...B } fragment B on RunPage { ...A }', 5)).not.toThrow();
  });
});
