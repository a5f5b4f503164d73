/**
 * The one schema builder. Each domain file (run, episode, queue, graph, nodeset, resources,
 * play) registers its types and root fields on it; index.ts imports them all and builds.
 */
import SchemaBuilder from '@pothos/core';
import { GraphQLError, Kind, type ValueNode } from 'graphql';
import type { ApiContext } from './context.js';

export const builder = new SchemaBuilder<{
  Context: ApiContext;
  Scalars: {
    JSON: { Input: unknown; Output: unknown };
    DateTime: { Input: Date; Output: Date | string };
  };
  DefaultFieldNullability: false;
}>({ defaultFieldNullability: false });

builder.queryType({ description: 'Read the graphs, nodesets, queue, runs, episodes and machine resources.' });
builder.mutationType({ description: 'Start and cancel evaluation runs.' });
builder.subscriptionType({ description: 'Live updates: a run\'s progress, its episodes as they complete, the queue, a played episode.' });

function parseJsonLiteral(ast: ValueNode, variables: Record<string, unknown> | null | undefined): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.ENUM:
      return ast.value;
    case Kind.LIST:
      return ast.values.map((v) => parseJsonLiteral(v, variables));
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, parseJsonLiteral(f.value, variables)]));
    case Kind.VARIABLE:
      return variables?.[ast.name.value];
  }
}

builder.scalarType('JSON', {
  description: 'Any JSON value: object, array, string, number, boolean or null.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => parseJsonLiteral(ast, variables),
});

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

function toDate(value: unknown): Date {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value;
  if (typeof value === 'string' && ISO_DATE.test(value)) {
    const d = new Date(value);
    if (!Number.isNaN(d.getTime())) return d;
  }
  throw new GraphQLError(`DateTime must be an ISO-8601 date-time such as 2026-11-30T10:15:00Z, got ${JSON.stringify(value)}`, {
    extensions: { code: 'BAD_USER_INPUT' },
  });
}

builder.scalarType('DateTime', {
  description: 'A moment in time as an ISO-8601 string in UTC, e.g. 2026-11-30T10:15:00.000Z.',
  serialize: (value) => toDate(value).toISOString(),
  parseValue: (value) => toDate(value),
  parseLiteral: (ast) => toDate(ast.kind === Kind.STRING ? ast.value : undefined),
});
