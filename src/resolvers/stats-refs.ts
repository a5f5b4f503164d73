/** GraphQL vocabulary of the statistics, shared by runs, comparisons and sweeps. */
import type { CiMethod } from '../stats/intervals.js';
import type { DifferenceCiMethod } from '../stats/paired.js';
import type { MetricGoal } from '../core/types.js';
import type { MetricVerdict } from '../compare/compare-runs.js';

type AnyCiMethod = CiMethod | DifferenceCiMethod;
import { builder } from './builder.js';

export const CiMethodRef = builder.enumType('CiMethod', {
  description: 'How a 95 % confidence interval was computed (docs/statistics.md).',
  values: {
    T: { value: 't' as AnyCiMethod, description: "Student's t with n−1 degrees of freedom." },
    WILSON: { value: 'wilson' as AnyCiMethod, description: 'Wilson score interval of a 0/1 rate (stays within [0, 1]).' },
    CLUSTERED_T: {
      value: 'clustered-t' as AnyCiMethod,
      description:
        'Cluster-robust standard error with t at C−1 degrees of freedom (C = clusters): episodes of one cluster are not independent.',
    },
    NEWCOMBE: {
      value: 'newcombe' as AnyCiMethod,
      description:
        "Newcombe's score interval of a difference of two paired 0/1 rates (from the two Wilson intervals and the pairs' correlation; stays within [−1, 1] and keeps a width when every pair moved alike). Over the clusters' count where clustered episodes leave the clustered t without width.",
    },
  },
});

export const MetricGoalRef = builder.enumType('MetricGoal', {
  description: 'Which way a metric is better, as its nodeset or graph declares (docs/statistics.md).',
  values: {
    MAX: { value: 'max' as MetricGoal, description: 'Higher is better (success, score, SPL).' },
    MIN: { value: 'min' as MetricGoal, description: 'Lower is better (steps, distance, latency, tokens).' },
  },
});

export const MetricVerdictRef = builder.enumType('MetricVerdict', {
  description: 'How the candidate did on a metric with a declared direction, from the paired 95 % interval of candidate − baseline.',
  values: {
    BETTER: { value: 'BETTER' as MetricVerdict, description: 'The interval lies wholly on the better side of 0.' },
    WORSE: { value: 'WORSE' as MetricVerdict, description: 'The interval lies wholly on the worse side of 0.' },
    NO_DIFFERENCE: { value: 'NO_DIFFERENCE' as MetricVerdict, description: 'The interval holds 0: no difference shown at this n.' },
  },
});
