/**
 * The default values the server declares for StartEvalInput's fields, read by introspection
 * so the run forms start from the server's defaults instead of copies of them.
 */
import { parse } from 'gql.tada';
import type { TadaDocumentNode } from './graphql.js';

/** A field's default as GraphQL literal text (`"0"`, `"true"`), or null when it has none. */
export interface InputFieldDefault {
  name: string;
  defaultValue: string | null;
}

/** gql.tada does not type introspection fields, so this one document states its shape itself. */
export const START_EVAL_INPUT_DEFAULTS = parse(
  'query StartEvalInputDefaults { __type(name: "StartEvalInput") { inputFields { name defaultValue } } }',
) as unknown as TadaDocumentNode<{ __type: { inputFields: InputFieldDefault[] | null } | null }, Record<string, never>>;
