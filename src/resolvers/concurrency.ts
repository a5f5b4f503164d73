/** Run.concurrency: what bounds a run's concurrency (workers, episodes in flight, the limits that bind). */
import { concurrencyOfSpec } from '../scheduler/concurrency-of-spec.js';
import type { ConcurrencyLimit, RunConcurrency } from '../spec/run-concurrency.js';
import { builder } from './builder.js';
import { RunRef } from './refs.js';
import { loadSpec, type RunSource } from './run-source.js';

const ConcurrencyLimitRef = builder.objectRef<ConcurrencyLimit>('ConcurrencyLimit').implement({
  description: "One bound on a run's concurrency below what it asked for.",
  fields: (t) => ({
    name: t.exposeString('name', {
      description: 'What bounds it: a replicated nodeset, a node\'s own limit ("llm.max_concurrency"), or "plays".',
    }),
    limit: t.exposeInt('limit', { description: 'The most it allows.' }),
    reason: t.exposeString('reason', { description: 'Why, in words.' }),
  }),
});

const RunConcurrencyRef = builder.objectRef<RunConcurrency>('RunConcurrency').implement({
  description:
    'How a run plays at once: workers are CPU lanes (admission counts cores by them), episodes in flight are plays waiting at once (many per worker where every node awaits I/O).',
  fields: (t) => ({
    workers: t.exposeInt('workers', { description: 'Workers (CPU lanes), each with its own hosts of the replicated nodesets.' }),
    perWorker: t.exposeInt('perWorker', { description: 'The most episodes one worker plays at once.' }),
    maxInFlight: t.exposeInt('maxInFlight', { description: 'Episodes in flight at once across the run, after every limit.' }),
    asked: t.int({
      nullable: true,
      description: 'The maxInFlight the run asked for; null when it took the default.',
      resolve: (c) => c.asked,
    }),
    basis: t.exposeString('basis', { description: 'How the in-flight count was chosen, in words.' }),
    limits: t.field({
      type: [ConcurrencyLimitRef],
      description:
        'Each bound below what the run asked (a replicated env, its play count), and each node whose own limit is below the in-flight count. Empty when nothing binds.',
      resolve: (c) => c.limits,
    }),
  }),
});

/** A run's spec never changes, so neither does its concurrency: the run page asks again at every update. */
const known = new Map<string, RunConcurrency | null>();
const KNOWN_MAX = 512;

function cached(runId: string, compute: () => RunConcurrency | null): RunConcurrency | null {
  if (known.has(runId)) return known.get(runId)!;
  const c = compute();
  if (known.size >= KNOWN_MAX) known.delete(known.keys().next().value!);
  known.set(runId, c);
  return c;
}

builder.objectField(RunRef, 'concurrency', (t) =>
  t.field({
    type: RunConcurrencyRef,
    nullable: true,
    description:
      "What bounds the run's concurrency, from its spec and its frozen graph's placement; null for a run recorded before graphs were frozen, or whose graph the server's nodesets no longer validate.",
    resolve: async (src: RunSource, _a, ctx) => {
      if (known.has(src.row.id)) return known.get(src.row.id)!;
      const spec = await loadSpec(src, ctx);
      if (!spec) return null;
      const nodesets = await ctx.nodesets.list();
      return cached(src.row.id, () => concurrencyOfSpec(spec, nodesets));
    },
  }),
);
