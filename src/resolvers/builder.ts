/**
 * The one schema builder. Each domain file (run, episode, queue, graph, nodeset, resources,
 * play) registers its types and root fields on it; index.ts imports them all and builds.
 */
import SchemaBuilder from '@pothos/core';
import { DateTimeResolver, JSONResolver } from 'graphql-scalars';
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
builder.subscriptionType({ description: "Live updates: a run's progress, its episodes as they complete, the queue, a played episode." });

// JSON and DateTime come from graphql-scalars: any JSON value, and an RFC 3339 date-time (a Date out as an ISO string).
builder.addScalarType('JSON', JSONResolver);
builder.addScalarType('DateTime', DateTimeResolver);
