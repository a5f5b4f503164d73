/** The selections several dashboard documents share, and the row types read from them. */
import { graphql, type ResultOf } from './graphql.js';

export const MetricAggregateFields = graphql(`
  fragment MetricAggregateFields on MetricAggregate { name mean count stderr clusteredStderr ciMethod min max imputedValue goal primary }
`);

export const RunRowFields = graphql(
  `
  fragment RunRowFields on Run {
    id status graphName episodeCount workerCount episodesDone priority createdAt startedAt finishedAt
    aggregateMetrics { ...MetricAggregateFields }
  }
`,
  [MetricAggregateFields],
);

/** A row of the runs list: what tells the run apart (labels, spec) and how its episodes ended. */
export const RunListFields = graphql(
  `
  fragment RunListFields on Run { ...RunRowFields name tags note error { code message } statusCounts { status count } spec models { node model reported { model } } }
`,
  [RunRowFields],
);

export const RunDetailFields = graphql(
  `
  fragment RunDetailFields on Run {
    ...RunRowFields
    seq seed timedOut error { code message } name cancelRequested codeTools summaryModified
    retiredWorkers { workerId reason }
    stopWhen { rule metric requirement against read low high verdict path { read low high } stopped { reason atEpisode planned saved fixedNPlan } }
    aggregateByTask { task metrics { ...MetricAggregateFields } }
    statusCounts { status count }
    models { node type model baseUrl sampling reported { model systemFingerprint calls } repeatsNote }
    concurrency { workers perWorker maxInFlight asked basis limits { name limit reason } }
  }
`,
  [RunRowFields, MetricAggregateFields],
);

export const EpisodeRowFields = graphql(`
  fragment EpisodeRowFields on Episode {
    index episodeId status steps metrics seed workerId durationMs task startedAt finishedAt
  }
`);

export const QueueEntryFields = graphql(`
  fragment QueueEntryFields on QueueEntry {
    runId position priority graphName episodeCount workerCount createdAt exclusiveGpu waitingReason reserving
    estimate { ramMb vramMb source }
  }
`);

export const ActiveJobFields = graphql(`
  fragment ActiveJobFields on ActiveJob {
    runId priority pid graphName startedAt cancelRequested episodesDone episodeCount workerCount viaSubprocess exclusiveGpu rssMb
  }
`);

export type MetricAggregate = ResultOf<typeof MetricAggregateFields>;
export type RunRow = ResultOf<typeof RunRowFields>;
export type RunListRow = ResultOf<typeof RunListFields>;
export type RunDetail = ResultOf<typeof RunDetailFields>;
export type TaskAggregate = RunDetail['aggregateByTask'][number];
export type RunModel = RunDetail['models'][number];
export type RunConcurrency = NonNullable<RunDetail['concurrency']>;
export type RunStopWhen = NonNullable<RunDetail['stopWhen']>;
export type EpisodeRow = ResultOf<typeof EpisodeRowFields>;
export type QueueEntry = ResultOf<typeof QueueEntryFields>;
export type ActiveJob = ResultOf<typeof ActiveJobFields>;
