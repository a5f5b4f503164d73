/**
 * The scale-out fleet (`serve --redis`): `workers` (each worker heard from lately) and
 * `Run.shards` (a run's shards while it is on the fleet).
 */
import type { WorkerView } from '../scaleout/scaleout-head.js';
import { SHARD_STATES, type ShardView } from '../scaleout/remote-run.js';
import { builder } from './builder.js';
import { RunRef } from './refs.js';

const ShardStateRef = builder.enumType('ShardState', {
  description: 'Where a shard of a scale-out run is: on the queue, on a worker, or done (every episode committed), or how it ended.',
  values: SHARD_STATES,
});

const ShardRef = builder.objectRef<ShardView>('Shard').implement({
  description: "A shard of a run spread over scale-out workers: contiguous run indices fixed by the run's shardSize.",
  fields: (t) => ({
    index: t.exposeInt('index', { description: 'The shard number, from 0.' }),
    first: t.exposeInt('first', { description: 'Its first run index.' }),
    end: t.exposeInt('end', { description: 'One past its last run index.' }),
    state: t.field({ type: ShardStateRef, description: 'Where it is.', resolve: (s) => s.state }),
    worker: t.exposeString('worker', { nullable: true, description: 'The worker that took it last (null until one did).' }),
    committed: t.exposeInt('committed', { description: 'Its episodes committed on this server.' }),
    attempts: t.exposeInt('attempts', { description: 'How many times a worker took it (above 1 after a worker was lost).' }),
  }),
});

const WorkerShardRef = builder.objectRef<{ runId: string; shard: number }>('WorkerShard').implement({
  description: 'A shard a worker is playing.',
  fields: (t) => ({
    runId: t.exposeString('runId', { description: 'The run.' }),
    shard: t.exposeInt('shard', { description: 'The shard number.' }),
  }),
});

const WorkerRef = builder.objectRef<WorkerView>('Worker').implement({
  description: 'An `evalctl worker` heard from lately.',
  fields: (t) => ({
    name: t.exposeString('worker', { description: 'Its name (`--name`, else host-pid).' }),
    machine: t.exposeString('machine', { description: 'The host name of its machine.' }),
    slots: t.exposeInt('slots', { description: 'Shards it plays at once at most.' }),
    ramFreeMb: t.exposeFloat('ramFreeMb', { nullable: true, description: 'Free RAM on its machine, MB.' }),
    vramFreeMb: t.exposeFloat('vramFreeMb', { nullable: true, description: 'Free GPU memory on its machine, MB (null without a GPU).' }),
    cores: t.exposeInt('cores', { description: 'Cores its admission shares among its shards.' }),
    shards: t.field({ type: [WorkerShardRef], description: 'The shards it is playing.', resolve: (w) => w.shards }),
    lastHeartbeat: t.field({ type: 'DateTime', description: 'When it last reported.', resolve: (w) => new Date(w.lastHeartbeat) }),
  }),
});

builder.queryFields((t) => ({
  workers: t.field({
    type: [WorkerRef],
    description: 'The scale-out workers heard from lately (empty without `serve --redis`).',
    resolve: (_root, _args, ctx) => ctx.scaleout?.workers() ?? [],
  }),
}));

builder.objectField(RunRef, 'shards', (t) =>
  t.field({
    type: [ShardRef],
    nullable: true,
    description: 'Its shards while it is on the scale-out workers; null otherwise (a local run, or one that has ended).',
    resolve: (r, _args, ctx) => ctx.scaleout?.shardsOf(r.row.id) ?? null,
  }),
);
