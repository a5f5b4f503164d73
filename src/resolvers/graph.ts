/**
 * Saved graphs: `graphs` and `graph(name)`.
 */
import type { GraphListing } from '../graph/graph-catalog.js';
import { entriesUsedBy, nodesetNamesOf, splitNodeType } from '../nodeset-registry/registry.js';
import { DEFAULT_STEP_BUDGET, type GraphEdge, type GraphNode, type GraphSpec } from '../core/types.js';
import { episodeChoices, type EpisodeChoices } from '../scheduler/dataset-selection.js';
import type { PanelFieldChoices } from '../nodeset-registry/panel-selection.js';
import { BadInputError } from '../errors.js';
import { RUN_LIMITS as L } from '../spec/run-spec.js';
import { builder } from './builder.js';
import { catalogOf } from './dataset.js';
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

const PanelFieldChoicesRef = builder.objectRef<PanelFieldChoices>('PanelFieldChoices').implement({
  description: "One field of an env's episode picker with what it offers.",
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The field, e.g. `dataset` or `split`.' }),
    label: t.exposeString('label', { nullable: true, description: 'Its label for people.' }),
    options: t.exposeStringList('options', {
      description: 'What it offers given the fields before it; empty when it takes any value, or when an earlier field stopped the walk.',
    }),
    value: t.exposeString('value', {
      nullable: true,
      description: "The value that applies: the one asked for when offered, else the env's default; null when none does.",
    }),
  }),
});

const EpisodeChoicesRef = builder.objectRef<EpisodeChoices>('EpisodeChoices').implement({
  description: "What the env that picks a graph's episodes offers, field by field (dataset → split), and how many episodes that leaves.",
  fields: (t) => ({
    nodeset: t.exposeString('nodeset', { description: 'The env whose picker this is.' }),
    fields: t.field({
      type: [PanelFieldChoicesRef],
      description: 'Its fields before the episode index, in cascade order.',
      resolve: (c) => c.fields,
    }),
    episodes: t.exposeInt('episodes', {
      nullable: true,
      description: 'Episodes the chosen fields offer (indices 0 to episodes − 1); null when unknown or a field is not offered.',
    }),
    problem: t.exposeString('problem', {
      nullable: true,
      description: 'Why the fields stop short (a dataset or split not offered, a dataset file that does not parse); null when none.',
    }),
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
      description:
        "Iterations per episode when neither the API nor the env says otherwise: the graph's own `step_budget`, else the default (500).",
      resolve: (g, _a, ctx) => specOf(g, ctx).step_budget ?? DEFAULT_STEP_BUDGET,
    }),
    nodes: t.field({ type: [GraphNodeRef], description: 'Its nodes.', resolve: (g, _a, ctx) => specOf(g, ctx).nodes }),
    edges: t.field({ type: [GraphEdgeRef], description: 'Its edges.', resolve: (g, _a, ctx) => specOf(g, ctx).edges }),
    nodesets: t.stringList({
      description: 'The nodesets its nodes use, sorted.',
      resolve: (g, _a, ctx) => nodesetNamesOf(specOf(g, ctx).nodes),
    }),
    episodeChoices: t.field({
      type: EpisodeChoicesRef,
      nullable: true,
      description:
        "What its env offers to pick episodes from (datasets, splits, episode count) for a dataset and split as startEval would take them; null when its env is not built in (only the env's host knows) or it has none.",
      args: {
        dataset: t.arg.string({ description: `The dataset asked for (blank: the env's default), at most ${L.maxNameChars} characters.` }),
        split: t.arg.string({
          description: `The split asked for (blank: the env's or the dataset's default), at most ${L.maxNameChars} characters.`,
        }),
      },
      resolve: async (g, args, ctx) => {
        for (const key of ['dataset', 'split'] as const) {
          const v = args[key];
          if (v && v.length > L.maxNameChars)
            throw new BadInputError(`${key} must be at most ${L.maxNameChars} characters, got ${v.length}`);
        }
        return episodeChoices(
          entriesUsedBy(specOf(g, ctx).nodes, await ctx.nodesets.list()),
          { ...(args.dataset ? { dataset: args.dataset } : {}), ...(args.split ? { split: args.split } : {}) },
          catalogOf(ctx),
        );
      },
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
