/** GraphQL vocabulary of the statistics, shared by runs, comparisons and sweeps. */
import type { CiMethod } from '../stats/intervals.js';
import { builder } from './builder.js';

export const CiMethodRef = builder.enumType('CiMethod', {
  description: 'How a 95 % confidence interval was computed (docs/statistics.md).',
  values: {
    T: { value: 't' as CiMethod, description: "Student's t with n−1 degrees of freedom." },
    WILSON: { value: 'wilson' as CiMethod, description: 'Wilson score interval of a 0/1 rate (stays within [0, 1]).' },
    CLUSTERED_T: {
      value: 'clustered-t' as CiMethod,
      description:
        'Cluster-robust standard error with t at C−1 degrees of freedom (C = clusters): episodes of one cluster are not independent.',
    },
  },
});
