/**
 * `graphql()` for the dashboard's documents: gql.tada reads schema/schema.graphql (through the
 * generated graphql-env.d.ts) so every result and variables type comes from the schema.
 * Regenerate graphql-env.d.ts after a schema change: `npx gql.tada generate output` in web/.
 */
import { initGraphQLTada } from 'gql.tada';
import type { introspection } from './graphql-env.js';

export const graphql = initGraphQLTada<{
  introspection: introspection;
  // Fragments give their plain fields: the dashboard reads them directly, it does not colocate.
  disableMasking: true;
  scalars: {
    /** Free-form JSON: narrowed where it is read (lib/metrics.ts for metrics). */
    JSON: unknown;
    /** ISO 8601 text. */
    DateTime: string;
  };
}>();

export type { FragmentOf, ResultOf, TadaDocumentNode, VariablesOf } from 'gql.tada';
