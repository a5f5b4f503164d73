/** GraphQL vocabulary of the statistics, shared by runs, comparisons and sweeps. */
import type { CiMethod } from '../stats/intervals.js';
import type { DifferenceCiMethod } from '../stats/paired.js';
import type { MetricGoal } from '../core/types.js';
import type { MetricVerdict, TestMethod } from '../compare/compare-runs.js';

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
    CLUSTERED_LOGIT_T: {
      value: 'clustered-logit-t' as AnyCiMethod,
      description:
        'A 0/1 rate with clustered episodes: the clustered t (C−1 degrees of freedom) on the logit scale, logit(p) ± t · SE_clustered / (p(1 − p)), mapped back; inside (0, 1) by construction.',
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

export const TestMethodRef = builder.enumType('TestMethod', {
  description: "The test behind a comparison row's pValue and its Benjamini–Hochberg flag (docs/statistics.md).",
  values: {
    PAIRED_T: { value: 'paired-t' as TestMethod, description: 'Paired t test, n−1 degrees of freedom.' },
    CLUSTERED_T: {
      value: 'clustered-t' as TestMethod,
      description: 'Paired t test with the cluster-robust standard error, C−1 degrees of freedom.',
    },
    MCNEMAR_EXACT: { value: 'mcnemar-exact' as TestMethod, description: "McNemar's exact test on the discordant pairs (0/1 metrics)." },
    MCNEMAR_CLUSTERED: {
      value: 'mcnemar-clustered' as TestMethod,
      description:
        "Durkalski et al.'s (2003) cluster-adjusted McNemar test, (Σ_k (b_k − c_k)/n_k)² / Σ_k ((b_k − c_k)/n_k)² against χ² with 1 df (0/1 metrics with clusters).",
    },
  },
});
