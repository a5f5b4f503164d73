/**
 * Saved graphs: `graphs` and `graph(name)`.
 */
import type { GraphListing } from '../graph/graph-catalog.js';
import { splitNodeType } from '../nodeset-registry/registry.js';
import type { GraphEdge, GraphNode, GraphSpec } from '../core/types.js';
import { builder } from './builder.js';
import type { ApiContext } from './context.js';

interface GraphSource {
  name: string;
  listing?: GraphListing;
  spec?: GraphSpec;
}

const specOf = (g: GraphSource, ctx: ApiContext): GraphSpec => (g.spec ??= ctx.graphs.load(g.name));

const GraphNodeRef = builder.objectRef<GraphNode>('GraphNode').implement({
  description: 'A node of a graph.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Unique within the graph; edges address ports as `id.port`.' }),
    type: t.exposeString('type', {
      description: '`<nodeset>__<function>` (e.g. `env_gridnav__step`) or a built-in type such as `graphOut`.',
    }),
    nodeset: t.string({
      nullable: true,
      description: 'The nodeset that serves it (null for built-in types).',
      resolve: (n) => splitNodeType(n.type)?.nodeset ?? null,
    }),
    config: t.field({ type: 'JSON', description: "Its configuration; a run's overrides patch it.", resolve: (n) => n.config ?? {} }),
  }),
});

const GraphEdgeRef = builder.objectRef<GraphEdge>('GraphEdge').implement({
  description: "A connection from one node's output port to another's input port.",
  fields: (t) => ({
    from: t.exposeString('from', { description: '`nodeId.outputPort`.' }),
    to: t.exposeString('to', { description: '`nodeId.inputPort`.' }),
    loop: t.boolean({ description: 'True when it carries its value into the next iteration.', resolve: (e) => e.loop === true }),
  }),
});

const GraphRef = builder.objectRef<GraphSource>('Graph').implement({
  description: 'A saved dataflow graph of env, agent and sink nodes.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Its name; `startEval` takes it as graphName.' }),
    description: t.string({
      nullable: true,
      description: 'What it does, in words.',
      resolve: (g, _a, ctx) => g.listing?.description ?? specOf(g, ctx).description ?? null,
    }),
    source: t.string({
      nullable: true,
      description: '`builtin`, or `workspace` when the active workspace overlays it.',
      resolve: (g) => g.listing?.source ?? null,
    }),
    stepBudget: t.int({
      nullable: true,
      description: 'Iterations per episode when neither the API nor the env says otherwise.',
      resolve: (g, _a, ctx) => specOf(g, ctx).step_budget ?? null,
    }),
    nodes: t.field({ type: [GraphNodeRef], description: 'Its nodes.', resolve: (g, _a, ctx) => specOf(g, ctx).nodes }),
    edges: t.field({ type: [GraphEdgeRef], description: 'Its edges.', resolve: (g, _a, ctx) => specOf(g, ctx).edges }),
    nodesets: t.stringList({
      description: 'The nodesets its nodes use, sorted.',
      resolve: (g, _a, ctx) => [...new Set(specOf(g, ctx).nodes.flatMap((n) => splitNodeType(n.type)?.nodeset ?? []))].sort(),
    }),
    json: t.field({ type: 'JSON', description: 'The graph file as JSON.', resolve: (g, _a, ctx) => specOf(g, ctx) }),
  }),
});

builder.queryFields((t) => ({
  graphs: t.field({
    type: [GraphRef],
    description: 'Every saved graph, sorted by name (the workspace copy where it overlays a built-in).',
    resolve: (_root, _args, ctx) => ctx.graphs.list().map((listing) => ({ name: listing.name, listing })),
  }),
  graph: t.field({
    type: GraphRef,
    nullable: true,
    description: 'One graph by name. NOT_FOUND when there is none; BAD_USER_INPUT for a malformed name.',
    args: { name: t.arg.string({ required: true, description: "The graph's name." }) },
    resolve: (_root, args, ctx) => {
      const spec = ctx.graphs.load(args.name);
      const listing = ctx.graphs.list().find((l) => l.name === args.name);
      return { name: args.name, spec, ...(listing ? { listing } : {}) };
    },
  }),
}));
