/**
 * Live Play: the `playEpisode` subscription steps through one episode in the backend and
 * streams every iteration, holding the scheduler's interactive lock while it plays.
 */
import { Repeater } from 'graphql-yoga';
import { parsePlayInput } from '../spec/parse-run-spec.js';
import { RUN_DEFAULTS, RUN_LIMITS } from '../spec/run-spec.js';
import { builder } from './builder.js';
import type { PlayEvent } from './play-runner.js';
import { EpisodeStatusRef } from './refs.js';
import { withoutNulls } from './without-nulls.js';

const PlayEventKindRef = builder.enumType('PlayEventKind', {
  description: 'What a play event reports.',
  values: {
    STARTED: { description: 'The episode is set up and the interactive lock is held.' },
    STEP: { description: 'One iteration of the graph has run.' },
    FINISHED: { description: 'The episode ended; the last event.' },
  } as const,
});

interface PlayFailure {
  kind: 'FAILURE';
  error: unknown;
}

const get = <K extends string>(e: PlayEvent, key: K): unknown => (key in e ? (e as unknown as Record<K, unknown>)[key] : null);

const PlayEventRef = builder.objectRef<PlayEvent>('PlayEvent').implement({
  description: 'One event of a played episode: its start, each step, its end.',
  fields: (t) => ({
    kind: t.field({ type: PlayEventKindRef, description: 'What this event reports.', resolve: (e) => e.kind }),
    step: t.int({ nullable: true, description: 'STEP: the iteration (0-based).', resolve: (e) => (e.kind === 'STEP' ? e.step : null) }),
    observation: t.field({
      type: 'JSON',
      nullable: true,
      description: "STEP: the env's `observation` output.",
      resolve: (e) => get(e, 'observation') ?? null,
    }),
    action: t.field({
      type: 'JSON',
      nullable: true,
      description: "STEP: the agent's `action` output.",
      resolve: (e) => get(e, 'action') ?? null,
    }),
    metrics: t.field({
      type: 'JSON',
      nullable: true,
      description: "STEP: the `metrics` output so far; FINISHED: the episode's metrics.",
      resolve: (e) => (e.kind === 'FINISHED' ? e.record.metrics : (get(e, 'metrics') ?? null)),
    }),
    done: t.boolean({
      description: 'True once a node has said `done` (and on FINISHED).',
      resolve: (e) => (e.kind === 'STEP' ? e.done : e.kind === 'FINISHED'),
    }),
    image: t.string({
      nullable: true,
      description:
        "The env's picture (e.g. the trajectory so far) as a data URL, when it rendered one this step; FINISHED: the final picture.",
      resolve: (e) => (e.kind === 'STARTED' ? null : e.image),
    }),
    outputs: t.field({
      type: 'JSON',
      nullable: true,
      description: "STEP: every node's outputs this iteration (node id → port → value; pictures as `{ $assetRef }`).",
      resolve: (e) => (e.kind === 'STEP' ? e.outputs : null),
    }),
    status: t.field({
      type: EpisodeStatusRef,
      nullable: true,
      description: 'FINISHED: how the episode ended.',
      resolve: (e) => (e.kind === 'FINISHED' ? e.status : null),
    }),
    record: t.field({
      type: 'JSON',
      nullable: true,
      description: 'FINISHED: the episode record (status, steps, metrics, seed, instruction …).',
      resolve: (e) => (e.kind === 'FINISHED' ? e.record : null),
    }),
    holder: t.string({
      nullable: true,
      description: 'STARTED: the name the interactive lock is held under.',
      resolve: (e) => (e.kind === 'STARTED' ? e.holder : null),
    }),
  }),
});

builder.subscriptionFields((t) => ({
  playEpisode: t.field({
    type: PlayEventRef,
    description:
      'Plays one episode of a graph in the backend, streaming every step (observation, action, metrics, done, the picture), and ends after it. While it plays the interactive lock holds and no queued run is admitted; the lock is released when it ends or the client goes away.',
    args: {
      graphName: t.arg.string({ required: true, description: 'The graph to play.' }),
      index: t.arg.int({ required: true, description: 'The env episode to play (index in the dataset split).' }),
      seed: t.arg.int({ defaultValue: RUN_DEFAULTS.seed, description: "Run seed; the episode's seed derives from it and the index." }),
      overrides: t.arg({
        type: 'JSON',
        description: `Config patches: node id → patch, at most ${RUN_LIMITS.maxOverridesBytes} bytes of JSON; each value must have the type its nodeset declares.`,
      }),
      dataset: t.arg.string({ description: 'Env panel dataset.' }),
      split: t.arg.string({ description: 'Env panel split.' }),
      stepBudget: t.arg.int({ description: 'Step budget override.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const prepared = await ctx.play.prepare(parsePlayInput(withoutNulls(args)));
      return new Repeater<PlayEvent | PlayFailure>(async (push, stop) => {
        const abort = new AbortController();
        void stop.then(() => abort.abort(new Error('the client went away')));
        try {
          await ctx.play.play(prepared, (e) => void push(e), abort.signal);
        } catch (err) {
          // Delivered as an event whose resolution fails, so the client gets a GraphQL error, not a dropped connection.
          if (!abort.signal.aborted) await push({ kind: 'FAILURE', error: err });
        }
        stop();
      });
    },
    resolve: (e: PlayEvent | PlayFailure) => {
      if (e.kind === 'FAILURE') throw e.error;
      return e;
    },
  }),
}));
