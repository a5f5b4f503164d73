/**
 * The model endpoints the shared hosts call and their concurrency limits, live: `endpoints`,
 * and `Run.endpoints` (those a run is calling).
 */
import type { EndpointUse } from '../core/types.js';
import { builder } from './builder.js';
import type { ApiContext } from './context.js';
import { RunRef } from './refs.js';

const EndpointLimitModeRef = builder.enumType('EndpointLimitMode', {
  description: "How an endpoint's limit of calls in flight is set.",
  values: {
    ADAPTIVE: { value: 'adaptive', description: 'It rises while latency holds and is cut on 429/503 (llm `max_concurrency` unset).' },
    FIXED: { value: 'fixed', description: 'It stays at llm `max_concurrency`.' },
  } as const,
});

const EndpointRef = builder.objectRef<EndpointUse>('Endpoint').implement({
  description:
    'A model endpoint (base URL and model) a shared host calls, with its limit of calls in flight now. Counters run from the start of the host.',
  fields: (t) => ({
    baseUrl: t.exposeString('baseUrl', { description: 'The base URL, without credentials, query or fragment.' }),
    model: t.exposeString('model', { description: 'The model asked for.' }),
    nodeset: t.exposeString('nodeset', { description: 'The nodeset whose shared host calls it.' }),
    mode: t.field({ type: EndpointLimitModeRef, description: 'Adaptive or fixed.', resolve: (e) => e.mode }),
    level: t.exposeInt('level', { description: 'Calls allowed in flight now.' }),
    floor: t.exposeInt('floor', { description: 'The least the level is cut to (the level itself when fixed).' }),
    cap: t.exposeInt('cap', { description: 'The most the level rises to (the level itself when fixed).' }),
    inFlight: t.exposeInt('inFlight', { description: 'Calls out now.' }),
    waiting: t.exposeInt('waiting', { description: 'Calls waiting for a slot (or for a Retry-After to pass).' }),
    answered: t.exposeInt('answered', { description: 'Calls answered.' }),
    count429: t.exposeInt('count429', { description: '429 (rate limited) answers.' }),
    count503: t.exposeInt('count503', { description: '503 (overloaded) answers.' }),
    lastRetryAfterMs: t.exposeInt('lastRetryAfterMs', {
      nullable: true,
      description: 'The last Retry-After the endpoint sent, in ms, as honoured: at most 60,000 (null: never sent one).',
    }),
    pausedForMs: t.exposeInt('pausedForMs', { description: 'How much longer new calls are held for a Retry-After, in ms.' }),
    runIds: t.stringList({
      description: 'Runs with a call out or waiting, or one in the last minute.',
      resolve: (e) => e.callers,
    }),
  }),
});

const endpointsOf = (ctx: ApiContext): Promise<EndpointUse[]> => ctx.scheduler.endpoints?.(ctx.signal) ?? Promise.resolve([]);

builder.queryFields((t) => ({
  endpoints: t.field({
    type: [EndpointRef],
    description: 'The model endpoints the shared hosts call, with their limits of calls in flight now.',
    resolve: (_root, _args, ctx) => endpointsOf(ctx),
  }),
}));

builder.objectField(RunRef, 'endpoints', (t) =>
  t.field({
    type: [EndpointRef],
    description: 'The model endpoints this run is calling (a call out or waiting, or one in the last minute), with their limits now.',
    resolve: async (run, _args, ctx) => (await endpointsOf(ctx)).filter((e) => e.callers.includes(run.row.id)),
  }),
);
