/**
 * A run's early stop in the API: StartEvalInput.stopWhen (the run spec's stopWhen, its `when`
 * written as `--stop-when` writes it) and Run.stopWhen (summary.json's watch: the interval as it
 * narrows, the verdict, and once stopped why, where and what it saved).
 */
import { parseStopWhen } from '../compare/stop-decision.js';
import type { StopWhenState } from '../store/types.js';
import { builder } from './builder.js';
import { GateVerdictRef } from './gate.js';
import { RunRef } from './refs.js';
import { loadSummary, type RunSource } from './run-source.js';

export const StopWhenInputRef = builder.inputType('StopWhenInput', {
  description: 'Stop the run early (docs/statistics.md, "Stopping a run early"); episodeCount is then the budget.',
  fields: (t) => ({
    when: t.string({
      required: true,
      description:
        '"decided" (needs `against`): stop once the requirement passes or fails; "halfwidth<=X": once the anytime-valid interval is at most ±X.',
    }),
    against: t.id({ description: "The baseline run's id; its scores are frozen into the run at submit." }),
    requirements: t.stringList({
      description:
        'One requirement on candidate − baseline, as the gate writes it ("spl > 0", "success >= -0.02"). Default: the primary metric better than the baseline.',
    }),
    metric: t.string({ description: "The metric a half-width rule watches. Default: the requirement's, else the primary metric." }),
  }),
});

/** StopWhenInput as the run spec takes it: `when` parsed (BAD_USER_INPUT naming the text otherwise). */
export function stopWhenOfInput(input: { when: string; [k: string]: unknown }): Record<string, unknown> {
  const when = parseStopWhen(input.when);
  return { ...input, when: when.kind === 'decided' ? 'decided' : { halfwidth: when.halfwidth } };
}

type Stopped = NonNullable<StopWhenState['stopped']>;

const StopReasonRef = builder.enumType('StopReason', {
  description: 'Why a run with stopWhen stopped.',
  values: {
    DECIDED: { value: 'decided' as const, description: 'The requirement passed or failed.' },
    HALFWIDTH: { value: 'halfwidth' as const, description: 'The interval reached the half-width asked for.' },
    BUDGET: { value: 'budget' as const, description: 'It read its whole budget (episodeCount) undecided.' },
  },
});

const RunStoppedRef = builder.objectRef<Stopped>('RunStopped').implement({
  description: 'Where a run with stopWhen stopped, and what it saved.',
  fields: (t) => ({
    reason: t.field({ type: StopReasonRef, description: 'Why it stopped.', resolve: (s) => s.reason }),
    atEpisode: t.exposeInt('atEpisode', { description: 'The prefix of its hand-out order it stopped at: the episodes counted.' }),
    planned: t.exposeInt('planned', { description: 'The budget: the episodes of the plan.' }),
    saved: t.exposeInt('saved', { description: 'planned − atEpisode: episodes not needed.' }),
    fixedNPlan: t.int({
      nullable: true,
      description:
        'Episodes a fixed-n plan would have needed for the same answer (80 % power), from the values read; null where they cannot say.',
      resolve: (s) => s.fixedNPlan,
    }),
  }),
});

const IntervalPointRef = builder.objectRef<[number, number, number]>('StopIntervalPoint').implement({
  description: 'The anytime-valid interval after a prefix of the run.',
  fields: (t) => ({
    read: t.int({ description: 'Episodes of the prefix read.', resolve: (p) => p[0] }),
    low: t.float({ description: 'The low end.', resolve: (p) => p[1] }),
    high: t.float({ description: 'The high end.', resolve: (p) => p[2] }),
  }),
});

const StopWhenStateRef = builder.objectRef<StopWhenState>('StopWhenState').implement({
  description: "A run's early stop as it stands, read over the completed prefix of its seeded hand-out order.",
  fields: (t) => ({
    rule: t.exposeString('rule', { description: '"decided" or "halfwidth<=X".' }),
    metric: t.exposeString('metric', { description: 'The metric watched.' }),
    requirement: t.string({ nullable: true, description: 'The requirement a "decided" rule judges.', resolve: (s) => s.requirement }),
    against: t.string({
      nullable: true,
      description: "The baseline's run id; null when the run watches its own mean.",
      resolve: (s) => s.against,
    }),
    read: t.exposeInt('read', { description: 'Episodes of the prefix read so far.' }),
    low: t.float({
      nullable: true,
      description: 'The interval now: low end (candidate − baseline, or the own mean).',
      resolve: (s) => s.interval?.[0] ?? null,
    }),
    high: t.float({ nullable: true, description: 'The interval now: high end.', resolve: (s) => s.interval?.[1] ?? null }),
    verdict: t.field({
      type: GateVerdictRef,
      nullable: true,
      description: 'A "decided" rule\'s verdict so far (INCONCLUSIVE while it goes on); null for a half-width rule.',
      resolve: (s) => s.verdict,
    }),
    path: t.field({
      type: [IntervalPointRef],
      description: 'The interval as the prefix grew (at most 200 points).',
      resolve: (s) => s.path,
    }),
    stopped: t.field({ type: RunStoppedRef, nullable: true, description: 'Set once it stopped.', resolve: (s) => s.stopped }),
  }),
});

builder.objectField(RunRef, 'stopWhen', (t) =>
  t.field({
    type: StopWhenStateRef,
    nullable: true,
    description: 'A run with stopWhen: its interval as it narrows, its verdict, and once stopped why and where; null for other runs.',
    resolve: async (src: RunSource, _a, ctx) => (await loadSummary(src, ctx))?.stopWhen ?? null,
  }),
);
