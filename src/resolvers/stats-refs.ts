/** GraphQL vocabulary of the statistics, shared by runs, comparisons and sweeps. */
import type { CiMethod } from '../stats/intervals.js';
import type { DifferenceCiMethod } from '../stats/paired.js';

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
