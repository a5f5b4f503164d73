/**
 * Nodesets: `nodesets`, with their functions, ports, env panel and declared resources.
 */
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import type { FunctionSpec, PanelFieldSpec, PanelSpec, PortSpec, ResourceSpec } from '../core/types.js';
import { NODE_TYPE_SEPARATOR } from '../nodeset-registry/registry.js';
import { builder } from './builder.js';

const ParallelismRef = builder.enumType('Parallelism', {
  description: "How a nodeset's host is used by runs.",
  values: {
    SHARED: {
      value: 'shared',
      description: 'One host (e.g. a model server) lent by the backend to every run, calls batched across workers.',
    },
    REPLICATED: { value: 'replicated', description: 'One host per worker, owned by the run (stateful envs).' },
  } as const,
});

const PortRef = builder.objectRef<PortSpec>('Port').implement({
  description: 'An input or output port of a node function.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The port name; edges address it as `nodeId.port`.' }),
    description: t.string({ nullable: true, description: 'What flows through it.', resolve: (p) => p.description ?? null }),
    optional: t.boolean({
      description: 'True for an input that may be absent (e.g. the action at iteration 0).',
      resolve: (p) => p.optional === true,
    }),
  }),
});

const NodeFunctionRef = builder.objectRef<{ nodeset: string; fn: FunctionSpec }>('NodeFunction').implement({
  description: 'A function a nodeset serves; a graph node calls it by its type.',
  fields: (t) => ({
    name: t.string({ description: 'The function name.', resolve: (f) => f.fn.name }),
    type: t.string({
      description: 'The node type that calls it: `<nodeset>__<function>`.',
      resolve: (f) => `${f.nodeset}${NODE_TYPE_SEPARATOR}${f.fn.name}`,
    }),
    description: t.string({ nullable: true, description: 'What it does.', resolve: (f) => f.fn.description ?? null }),
    inputs: t.field({ type: [PortRef], description: 'Its input ports.', resolve: (f) => f.fn.inputs }),
    outputs: t.field({ type: [PortRef], description: 'Its output ports.', resolve: (f) => f.fn.outputs }),
    batched: t.boolean({ description: 'True when concurrent calls are coalesced into one batch.', resolve: (f) => f.fn.batched === true }),
    config: t.field({
      type: 'JSON',
      description:
        'Config keys it understands: key → { default, description, type, minimum, maximum, enum }; a graph or override giving a key a value of another type, out of range or not in its enum is refused.',
      resolve: (f) => f.fn.config ?? {},
    }),
  }),
});

const PanelFieldRef = builder.objectRef<PanelFieldSpec>('PanelField').implement({
  description: "One field of an env's episode picker (e.g. dataset → split → episode).",
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The field name, e.g. `dataset`.' }),
    label: t.string({ nullable: true, description: 'Its label for people.', resolve: (f) => f.label ?? null }),
    dependsOn: t.stringList({
      description: 'Fields earlier in the cascade; changing one resets this one.',
      resolve: (f) => f.dependsOn ?? [],
    }),
    default: t.field({ type: 'JSON', nullable: true, description: 'Its default value.', resolve: (f) => f.default ?? null }),
  }),
});

const PanelRef = builder.objectRef<PanelSpec>('Panel').implement({
  description: "An env's episode picker.",
  fields: (t) => ({
    fields: t.field({ type: [PanelFieldRef], description: 'Its cascading fields, in order.', resolve: (p) => p.fields }),
    actions: t.stringList({ description: 'Its actions, e.g. `play`.', resolve: (p) => p.actions }),
  }),
});

const ResourceSpecRef = builder.objectRef<ResourceSpec>('DeclaredResources').implement({
  description: 'The memory one host of a nodeset declares it needs.',
  fields: (t) => ({
    ramMb: t.float({ nullable: true, description: 'RAM in MB.', resolve: (r) => r.ramMb ?? null }),
    vramMb: t.float({ nullable: true, description: 'GPU memory in MB.', resolve: (r) => r.vramMb ?? null }),
  }),
});

const NodesetRef = builder.objectRef<NodesetEntry>('Nodeset').implement({
  description: 'A folder of node functions served by one host process: an env, a model, a planner.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Its name; node types start with it.' }),
    version: t.string({ nullable: true, description: 'Its version, if declared.', resolve: (n) => n.manifest.version ?? null }),
    description: t.string({ nullable: true, description: 'What it is.', resolve: (n) => n.manifest.description ?? null }),
    parallelism: t.field({
      type: ParallelismRef,
      description: 'Shared (lent by the backend) or replicated (one per worker).',
      resolve: (n) => n.manifest.parallelism,
    }),
    source: t.string({ description: '`builtin`, `workspace` or `remote`.', resolve: (n) => n.source }),
    functions: t.field({
      type: [NodeFunctionRef],
      description: 'The functions it serves.',
      resolve: (n) => n.manifest.functions.map((fn) => ({ nodeset: n.name, fn })),
    }),
    panel: t.field({
      type: PanelRef,
      nullable: true,
      description: 'Its episode picker, for envs.',
      resolve: (n) => n.manifest.panel ?? null,
    }),
    resources: t.field({
      type: ResourceSpecRef,
      nullable: true,
      description: 'Declared memory per host.',
      resolve: (n) => n.manifest.resources ?? null,
    }),
  }),
});

builder.queryFields((t) => ({
  nodesets: t.field({
    type: [NodesetRef],
    description: 'Every nodeset known to the backend (built-in and workspace), sorted by name.',
    resolve: async (_root, _args, ctx) => [...(await ctx.nodesets.list())].sort((a, b) => a.name.localeCompare(b.name)),
  }),
}));
