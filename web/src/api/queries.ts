/** Every GraphQL operation the dashboard sends; their result and variables types come from the schema. */
import { ActiveJobFields, EpisodeRowFields, QueueEntryFields, RunDetailFields, RunListFields } from './fragments.js';
import { graphql, type ResultOf } from './graphql.js';

export const RUNS = graphql(
  `
  query Runs($status: RunStatus, $graphName: String, $tag: String, $search: String, $offset: Int, $first: Int) {
    runs(status: $status, graphName: $graphName, tag: $tag, search: $search, offset: $offset, first: $first) {
      total items { ...RunListFields }
    }
  }
`,
  [RunListFields],
);

export const GRAPH_NAMES = graphql(`query GraphNames { graphs { name } }`);

export const RUN = graphql(`query Run($id: ID!) { run(id: $id) { ...RunDetailFields } }`, [RunDetailFields]);

export const RUN_EPISODES = graphql(
  `
  query RunEpisodes($id: ID!, $offset: Int, $first: Int) {
    run(id: $id) { id episodes(offset: $offset, first: $first) { total items { ...EpisodeRowFields } } }
  }
`,
  [EpisodeRowFields],
);

export const EPISODE = graphql(
  `
  query Episode($id: ID!, $index: Int!, $logOffset: Int, $logFirst: Int) {
    run(id: $id) { id graphName episode(index: $index) {
      ...EpisodeRowFields scene instruction sampleId scores error stepBudget
      nodeErrors { nodeId step message }
      assets { name mime bytes url nodeId step }
      log(offset: $logOffset, first: $logFirst) { total lines { line step nodeId type ms inputs outputs error } }
    } }
  }
`,
  [EpisodeRowFields],
);

/** An episode's event history (model and tool calls), asked apart so the drawer shows the record even when it is large. */
export const EPISODE_EVENTS = graphql(
  `query EpisodeEvents($id: ID!, $index: Int!, $first: Int) { run(id: $id) { id episode(index: $index) { index events(first: $first) { total events } } } }`,
);

/** A run's evaluation report (report.json), null until it is written. */
export const RUN_REPORT = graphql(`query RunReport($id: ID!) { run(id: $id) { id status report } }`);

export const RUN_PROGRESS = graphql(`subscription RunProgress($id: ID!) { runProgress(id: $id) { ...RunDetailFields } }`, [
  RunDetailFields,
]);

export const EPISODE_COMPLETED = graphql(
  `
  subscription EpisodeCompleted($runId: ID!, $includeExisting: Boolean) {
    episodeCompleted(runId: $runId, includeExisting: $includeExisting) { ...EpisodeRowFields }
  }
`,
  [EpisodeRowFields],
);

export const QUEUE = graphql(
  `
  query Queue {
    queue { ...QueueEntryFields }
    activeJobs { ...ActiveJobFields }
    resources { ramTotalMb ramFreeMb vramTotalMb vramFreeMb reservedRamMb reservedVramMb interactiveLockHolder sampledAt }
  }
`,
  [QueueEntryFields, ActiveJobFields],
);

export const QUEUE_CHANGED = graphql(
  `subscription QueueChanged { queueChanged { queue { ...QueueEntryFields } activeJobs { ...ActiveJobFields } } }`,
  [QueueEntryFields, ActiveJobFields],
);

export const GRAPHS = graphql(`
  query Graphs {
    graphs { name description stepBudget nodes { id type nodeset config } edges { from to loop } }
    nodesets { name parallelism description panel { fields { name default } } }
  }
`);

export const START_EVAL = graphql(
  `mutation StartEval($input: StartEvalInput!) { startEval(input: $input) { runId status viaSubprocess } }`,
);

/** A run's labels and its whole spec (the frozen graph included), for the run page and Run again. */
export const RUN_SPEC = graphql(`query RunSpec($id: ID!) { run(id: $id) { id name tags note spec(withGraph: true) } }`);

export const UPDATE_RUN = graphql(`
  mutation UpdateRun($id: ID!, $name: String, $tags: [String!], $note: String) {
    updateRun(id: $id, name: $name, tags: $tags, note: $note) { id name tags note }
  }
`);

export const CANCEL_RUN = graphql(`mutation CancelRun($id: ID!) { cancelRun(id: $id) { id status } }`);

export const RETRY_RUN = graphql(`mutation RetryRun($id: ID!) { retryRun(id: $id) { runId status attempt } }`);

export const PLAY_EPISODE = graphql(`
  subscription PlayEpisode($graphName: String!, $index: Int!, $seed: Int, $overrides: JSON, $dataset: String, $split: String, $stepBudget: Int) {
    playEpisode(graphName: $graphName, index: $index, seed: $seed, overrides: $overrides, dataset: $dataset, split: $split, stepBudget: $stepBudget) {
      kind step observation action metrics done status image holder record
    }
  }
`);

// The graph catalogue, as the New run and Play pages read it.
export type GraphInfo = ResultOf<typeof GRAPHS>['graphs'][number];
export type NodesetInfo = ResultOf<typeof GRAPHS>['nodesets'][number];
export type PlayEvent = ResultOf<typeof PLAY_EPISODE>['playEpisode'];

/** The scale-out workers heard from lately (polled: heartbeats are sampled, not pushed). */
export const WORKERS = graphql(`
  query Workers { workers { name machine slots cores ramFreeMb vramFreeMb lastHeartbeat shards { runId shard } } }
`);
export type WorkerRow = ResultOf<typeof WORKERS>['workers'][number];

/** A run's shards while it is on the scale-out workers (null for a local or ended run). */
export const RUN_SHARDS = graphql(`
  query RunShards($id: ID!) { run(id: $id) { id status shards { index first end state worker committed attempts } } }
`);
export type ShardRow = NonNullable<NonNullable<ResultOf<typeof RUN_SHARDS>['run']>['shards']>[number];

/** The model endpoints a run is calling, with their limits now (polled: the host's counters are sampled, not pushed). */
export const RUN_ENDPOINTS = graphql(`
  query RunEndpoints($id: ID!) {
    run(id: $id) { id endpoints { baseUrl model mode level floor cap inFlight waiting count429 count503 lastRetryAfterMs pausedForMs } }
  }
`);
export type EndpointRow = NonNullable<ResultOf<typeof RUN_ENDPOINTS>['run']>['endpoints'][number];

/** What a graph's env offers to pick episodes from (datasets, splits, episode count) for the form's dataset and split. */
export const EPISODE_CHOICES = graphql(`
  query EpisodeChoices($graph: String!, $dataset: String, $split: String) {
    graph(name: $graph) { name episodeChoices(dataset: $dataset, split: $split) { nodeset episodes problem fields { name options value } } }
  }
`);
