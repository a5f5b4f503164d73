/**
 * Query limits, each computed in time linear in the document so that no small query can stall
 * the server: tokens (while parsing), depth, aliases and directives (validation rules from
 * GraphQL Armor, which counts each fragment once), and cost (checked just before execution,
 * when the variables are known: each field costs 1, and a field with a `first` argument
 * multiplies the cost of what it selects by that page size; each fragment's cost is computed
 * once per operation).
 */
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { GraphQLArmorRejectCallback } from '@escape.tech/graphql-armor-types';
import {
  GraphQLError,
  getNamedType,
  isInterfaceType,
  isObjectType,
  Kind,
  valueFromAST,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

export interface QueryLimits {
  /** Deepest selection allowed; fragments add no level of their own, `__schema` is not counted. @default 12 */
  maxDepth?: number;
  /** Highest cost allowed. @default 50000 */
  maxCost?: number;
  /** Most aliased fields in one operation (`__typename` not counted). @default 30 */
  maxAliases?: number;
  /** Most directives in one operation. @default 50 */
  maxDirectives?: number;
  /** Most lexical tokens in one document. @default 1000 */
  maxTokens?: number;
}

export const DEFAULT_MAX_DEPTH = 12;
export const DEFAULT_MAX_COST = 50_000;
export const DEFAULT_MAX_ALIASES = 30;
export const DEFAULT_MAX_DIRECTIVES = 50;
/** The dashboard's largest operation has about 100 tokens, GraphiQL's introspection about 200. */
export const DEFAULT_MAX_TOKENS = 1000;

const isIntrospection = (name: string): boolean => name.startsWith('__');

function fragmentsOf(doc: DocumentNode): Map<string, FragmentDefinitionNode> {
  const out = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) out.set(d.name.value, d);
  return out;
}

/**
 * The cost of one operation with its variables. A fragment's cost depends only on the fragment
 * and the variables, so it is computed once: a fragment spread twice by each of 30 nested
 * fragments costs 2^30 but takes 30 steps to count.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  op: OperationDefinitionNode,
  variables: Record<string, unknown> | null | undefined,
): number {
  const fragments = fragmentsOf(document);
  const root =
    op.operation === 'query'
      ? schema.getQueryType()
      : op.operation === 'mutation'
        ? schema.getMutationType()
        : schema.getSubscriptionType();
  if (!root) return 0;
  const fragmentCost = new Map<string, number>();
  const visiting = new Set<string>();
  const costOf = (set: SelectionSetNode, parent: GraphQLNamedType): number => {
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const name = sel.name.value;
        if (isIntrospection(name)) continue;
        if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
        const def = parent.getFields()[name];
        if (!def) continue;
        let factor = 1;
        const firstDef = def.args.find((a) => a.name === 'first');
        if (firstDef) {
          const node = sel.arguments?.find((a) => a.name.value === 'first');
          const value = node ? valueFromAST(node.value, firstDef.type, variables ?? undefined) : firstDef.defaultValue;
          if (typeof value === 'number' && value > 1) factor = value;
        }
        const child = sel.selectionSet ? costOf(sel.selectionSet, getNamedType(def.type)) : 0;
        total += 1 + factor * child;
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const type = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
        total += costOf(sel.selectionSet, type ?? parent);
      } else {
        const name = sel.name.value;
        const known = fragmentCost.get(name);
        if (known !== undefined) {
          total += known;
          continue;
        }
        const frag = fragments.get(name);
        // A cycle is refused by the standard rules; here it only must not loop.
        if (!frag || visiting.has(name)) continue;
        visiting.add(name);
        const cost = costOf(frag.selectionSet, schema.getType(frag.typeCondition.name.value) ?? parent);
        visiting.delete(name);
        fragmentCost.set(name, cost);
        total += cost;
      }
    }
    return total;
  };
  return costOf(op.selectionSet, root);
}

function selectedOperation(document: DocumentNode, operationName: string | null | undefined): OperationDefinitionNode | undefined {
  const ops = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return operationName ? ops.find((o) => o.name?.value === operationName) : ops[0];
}

function costError(cost: number, maxCost: number): GraphQLError {
  // Beyond 2^53 the figure is meaningless; say so rather than print 1e+21.
  const shown = Number.isSafeInteger(cost) ? String(cost) : 'more than 2^53';
  return new GraphQLError(
    `the operation costs ${shown} (each field 1, times the page size of the lists above it); the limit is ${maxCost}: ask for smaller pages`,
    {
      // Set before execution stops, this result skips the other plugins: it carries its own HTTP status (400 under graphql-response+json).
      extensions: { code: 'BAD_USER_INPUT', cost: Number.isSafeInteger(cost) ? cost : null, maxCost, http: { status: 400, spec: true } },
    },
  );
}

/**
 * An armor rejection reported as a validation error in our words, with BAD_USER_INPUT (armor
 * would throw, which yoga answers as an unexpected error).
 */
function report(what: string, limit: number): GraphQLArmorRejectCallback {
  return (context, error) => {
    const found = /found (\d+)/.exec(error.message)?.[1];
    const message = found
      ? `the operation has ${found} ${what}; the limit is ${limit}`
      : `the operation has more ${what} than the limit of ${limit}`;
    context?.reportError(
      new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', ...(found ? { found: Number(found) } : {}), limit } }),
    );
  };
}

/** A yoga plugin: token, depth, alias and directive limits (armor) and the cost limit before execute and subscribe (HTTP, SSE and WebSocket alike). */
export function useQueryLimits(limits: QueryLimits = {}): Plugin {
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_DEPTH;
  const maxCost = limits.maxCost ?? DEFAULT_MAX_COST;
  const maxAliases = limits.maxAliases ?? DEFAULT_MAX_ALIASES;
  const maxDirectives = limits.maxDirectives ?? DEFAULT_MAX_DIRECTIVES;
  const maxTokens = limits.maxTokens ?? DEFAULT_MAX_TOKENS;
  const armor = EnvelopArmorPlugin({
    // The schema is public (introspection is on): suggestions give nothing away.
    blockFieldSuggestion: { enabled: false },
    // Armor's cost model ignores variables (`first: $n`): ours, below, reads them.
    costLimit: { enabled: false },
    maxTokens: { n: maxTokens },
    maxDepth: { n: maxDepth, flattenFragments: true, propagateOnRejection: false, onReject: [report('levels of nesting', maxDepth)] },
    maxAliases: { n: maxAliases, propagateOnRejection: false, onReject: [report('aliases', maxAliases)] },
    maxDirectives: { n: maxDirectives, propagateOnRejection: false, onReject: [report('directives', maxDirectives)] },
  }) as Plugin;
  const check = (args: {
    schema: GraphQLSchema;
    document: DocumentNode;
    operationName?: string | null;
    variableValues?: Record<string, unknown> | null;
  }) => {
    const op = selectedOperation(args.document, args.operationName);
    if (!op) return undefined;
    const cost = operationCost(args.schema, args.document, op, args.variableValues);
    return cost > maxCost ? costError(cost, maxCost) : undefined;
  };
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(armor);
    },
    onExecute({ args, setResultAndStopExecution }) {
      const error = check(args);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const error = check(args);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}
