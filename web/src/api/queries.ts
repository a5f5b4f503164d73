/** Every GraphQL document the dashboard sends. */

const AGG = 'name mean count stderr min max';

const RUN_ROW = `id status graphName episodeCount workerCount episodesDone priority createdAt startedAt finishedAt aggregateMetrics { ${AGG} }`;

const RUN_DETAIL = `${RUN_ROW} seq seed timedOut error { code message }
  aggregateByTask { task metrics { ${AGG} } }
  statusCounts { status count }`;

const EPISODE_ROW = 'index episodeId status steps metrics seed workerId durationMs task startedAt finishedAt';

export const RUNS = `query Runs($status: RunStatus, $graphName: String, $offset: Int, $first: Int) {
  runs(status: $status, graphName: $graphName, offset: $offset, first: $first) { total items { ${RUN_ROW} } }
}`;

export const GRAPH_NAMES = `query GraphNames { graphs { name } }`;

export const RUN = `query Run($id: ID!) { run(id: $id) { ${RUN_DETAIL} } }`;

export const RUN_EPISODES = `query RunEpisodes($id: ID!, $offset: Int, $first: Int) {
  run(id: $id) { id episodes(offset: $offset, first: $first) { total items { ${EPISODE_ROW} } } }
}`;

export const EPISODE = `query Episode($id: ID!, $index: Int!, $logOffset: Int, $logFirst: Int) {
  run(id: $id) { id graphName episode(index: $index) {
    ${EPISODE_ROW} scene instruction error stepBudget
    nodeErrors { nodeId step message }
    assets { name mime bytes url nodeId step }
    log(offset: $logOffset, first: $logFirst) { total lines { line step nodeId type ms inputs outputs error } }
  } }
}`;

export const RUN_PROGRESS = `subscription RunProgress($id: ID!) { runProgress(id: $id) { ${RUN_DETAIL} } }`;

export const EPISODE_COMPLETED = `subscription EpisodeCompleted($runId: ID!, $includeExisting: Boolean) {
  episodeCompleted(runId: $runId, includeExisting: $includeExisting) { ${EPISODE_ROW} }
}`;

const QUEUE_FIELDS = `queue { runId position priority graphName episodeCount workerCount createdAt exclusiveGpu waitingReason reserving estimate { ramMb vramMb source } }
  activeJobs { runId priority pid graphName startedAt episodesDone episodeCount workerCount viaSubprocess exclusiveGpu rssMb }`;

export const QUEUE = `query Queue {
  ${QUEUE_FIELDS}
  resources { ramTotalMb ramFreeMb vramTotalMb vramFreeMb reservedRamMb reservedVramMb interactiveLockHolder sampledAt }
}`;

export const QUEUE_CHANGED = `subscription QueueChanged { queueChanged { ${QUEUE_FIELDS} } }`;

export const GRAPHS = `query Graphs {
  graphs { name description stepBudget nodes { id type nodeset config } edges { from to loop } }
  nodesets { name parallelism description }
}`;

export const START_EVAL = `mutation StartEval($input: StartEvalInput!) { startEval(input: $input) { runId status viaSubprocess } }`;

export const CANCEL_RUN = `mutation CancelRun($id: ID!) { cancelRun(id: $id) { id status } }`;

export const PLAY_EPISODE = `subscription PlayEpisode($graphName: String!, $index: Int!, $seed: Int, $overrides: JSON, $dataset: String, $split: String, $stepBudget: Int) {
  playEpisode(graphName: $graphName, index: $index, seed: $seed, overrides: $overrides, dataset: $dataset, split: $split, stepBudget: $stepBudget) {
    kind step observation action metrics done status image holder record
  }
}`;
