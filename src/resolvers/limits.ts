/**
 * Query depth and cost limits. Depth is a validation rule (it needs no variables); cost is
 * checked just before execution, when the variables are known: each field costs 1, and a field
 * with a `first` argument multiplies the cost of what it selects by that page size.
 */
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
  type ValidationContext,
  type ASTVisitor,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

export interface QueryLimits {
  /** Deepest selection allowed (introspection fields not counted). @default 12 */
  maxDepth?: number;
  /** Highest cost allowed. @default 50000 */
  maxCost?: number;
}

export const DEFAULT_MAX_DEPTH = 12;
export const DEFAULT_MAX_COST = 50_000;

const isIntrospection = (name: string): boolean => name.startsWith('__');

function fragmentsOf(doc: DocumentNode): Map<string, FragmentDefinitionNode> {
  const out = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) out.set(d.name.value, d);
  return out;
}

function depthOf(set: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, visiting: Set<string>): number {
  let max = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      if (isIntrospection(sel.name.value)) continue;
      max = Math.max(max, 1 + (sel.selectionSet ? depthOf(sel.selectionSet, fragments, visiting) : 0));
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      max = Math.max(max, depthOf(sel.selectionSet, fragments, visiting));
    } else {
      const name = sel.name.value;
      const frag = fragments.get(name);
      if (!frag || visiting.has(name)) continue;
      visiting.add(name);
      max = Math.max(max, depthOf(frag.selectionSet, fragments, visiting));
      visiting.delete(name);
    }
  }
  return max;
}

/** Validation rule: refuses operations nested deeper than `maxDepth`. */
export function depthLimitRule(maxDepth: number) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = fragmentsOf(context.getDocument());
    return {
      OperationDefinition(op) {
        const depth = depthOf(op.selectionSet, fragments, new Set());
        if (depth > maxDepth) {
          context.reportError(
            new GraphQLError(`${op.name ? `operation "${op.name.value}"` : 'the operation'} is nested ${depth} levels deep; the limit is ${maxDepth}`, {
              nodes: [op],
              extensions: { code: 'BAD_USER_INPUT', depth, maxDepth },
            }),
          );
        }
      },
    };
  };
}

/** The cost of one operation with its variables. */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  op: OperationDefinitionNode,
  variables: Record<string, unknown> | null | undefined,
): number {
  const fragments = fragmentsOf(document);
  const root = op.operation === 'query' ? schema.getQueryType() : op.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  if (!root) return 0;
  const costOf = (set: SelectionSetNode, parent: GraphQLNamedType, visiting: Set<string>): number => {
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
        const child = sel.selectionSet ? costOf(sel.selectionSet, getNamedType(def.type), visiting) : 0;
        total += 1 + factor * child;
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const type = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
        total += costOf(sel.selectionSet, type ?? parent, visiting);
      } else {
        const name = sel.name.value;
        const frag = fragments.get(name);
        if (!frag || visiting.has(name)) continue;
        visiting.add(name);
        total += costOf(frag.selectionSet, schema.getType(frag.typeCondition.name.value) ?? parent, visiting);
        visiting.delete(name);
      }
    }
    return total;
  };
  return costOf(op.selectionSet, root, new Set());
}

function selectedOperation(document: DocumentNode, operationName: string | null | undefined): OperationDefinitionNode | undefined {
  const ops = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return operationName ? ops.find((o) => o.name?.value === operationName) : ops[0];
}

function costError(cost: number, maxCost: number): GraphQLError {
  return new GraphQLError(`the operation costs ${cost} (each field 1, times the page size of the lists above it); the limit is ${maxCost}: ask for smaller pages`, {
    extensions: { code: 'BAD_USER_INPUT', cost, maxCost },
  });
}

/** A yoga plugin: the depth rule at validation, the cost check before execute and subscribe (HTTP, SSE and WebSocket alike). */
export function useQueryLimits(limits: QueryLimits = {}): Plugin {
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_DEPTH;
  const maxCost = limits.maxCost ?? DEFAULT_MAX_COST;
  const check = (args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; variableValues?: Record<string, unknown> | null }) => {
    const op = selectedOperation(args.document, args.operationName);
    if (!op) return undefined;
    const cost = operationCost(args.schema, args.document, op, args.variableValues);
    return cost > maxCost ? costError(cost, maxCost) : undefined;
  };
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(depthLimitRule(maxDepth));
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
