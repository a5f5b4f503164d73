/** The documents of the compare and sweep pages; their types come from the schema like every other. */
import { graphql, type ResultOf } from './graphql.js';

export const CompareRunFields = graphql(`
  fragment CompareRunFields on Run { id name tags graphName status episodeCount statusCounts { status count } spec }
`);

export const MetricComparisonFields = graphql(`
  fragment MetricComparisonFields on MetricComparison {
    metric n binary baselineMean candidateMean meanDiff pairedStderr ci95Low ci95High ciMethod df clusters
    unpairedStderr unpairedCi95Low unpairedCi95High correlation goal verdict wins ties losses
    mcnemarP pairedTP pValue testMethod designEffect bhAdjustedP bhSignificant excludedPairs mde
  }
`);

export const COMPARE_RUNS = graphql(
  `
  query CompareRuns($baseline: ID!, $candidates: [ID!]!, $metrics: [String!]) {
    compareRuns(baseline: $baseline, candidates: $candidates, metrics: $metrics) {
      fdrLevel metrics
      baseline { ...CompareRunFields }
      candidates {
        candidate { ...CompareRunFields }
        overlap partial note warnings baselineEpisodes candidateEpisodes
        metrics {
          ...MetricComparisonFields
          flips { episodeId direction baselineIndex candidateIndex baselineValue candidateValue }
        }
      }
    }
  }
`,
  [CompareRunFields, MetricComparisonFields],
);

/** Both records of a flipped episode, with their pictures. */
export const FLIP_PAIR = graphql(`
  query FlipPair($a: ID!, $ai: Int!, $b: ID!, $bi: Int!) {
    a: run(id: $a) { id episode(index: $ai) { index episodeId status steps metrics assets { name mime url } } }
    b: run(id: $b) { id episode(index: $bi) { index episodeId status steps metrics assets { name mime url } } }
  }
`);

export const SWEEP = graphql(
  `
  query Sweep($id: ID!) {
    sweep(id: $id) {
      id status graphName createdAt cancelledAt grid seeds metrics runCount runsFinished
      configs {
        index label isBaseline point
        runs { id status name }
        metrics {
          name
          aggregate { name mean count stderr ci95Low ci95High ciMethod clusters binary }
          vsBaseline { ...MetricComparisonFields }
        }
      }
    }
  }
`,
  [MetricComparisonFields],
);

export const CANCEL_SWEEP = graphql(`mutation CancelSweep($id: ID!) { cancelSweep(id: $id) { id status } }`);

export type Comparison = ResultOf<typeof COMPARE_RUNS>['compareRuns'];
export type CandidateComparison = Comparison['candidates'][number];
export type MetricComparison = CandidateComparison['metrics'][number];
export type CompareRun = ResultOf<typeof CompareRunFields>;
export type SweepResult = ResultOf<typeof SWEEP>['sweep'];

/** The gate's verdicts for one candidate (what `evalctl gate` exits on). */
export const GATE = graphql(`
  query Gate($baseline: ID!, $candidate: ID!, $requirements: [String!]) {
    gate(baseline: $baseline, candidate: $candidate, requirements: $requirements) {
      verdict alpha correction notes
      metrics { metric requirement question goal verdict decidedAt n meanDiff intervalLow intervalHigh method level mde episodesNeeded reason }
    }
  }
`);

export type GateResult = ResultOf<typeof GATE>['gate'];
