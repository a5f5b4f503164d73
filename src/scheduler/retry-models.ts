/**
 * What a retry checks of its run's models before it plays (docs/retry.md): each model-backed
 * node still resolves a model (a run frozen before models were recorded reads it from the
 * environment, as a submit would), and its endpoint still serves the model the run played.
 */
import { CodedError } from '../errors.js';
import { changedModels } from '../nodesets/llm/served-models.js';
import { readRunManifest } from '../store/run-manifest.js';
import type { RunSpec } from '../store/types.js';
import { assertModelSetup, type RunGraphInfo } from './run-graph.js';

/** A retry refused because the endpoint now serves another model than the one the run played. */
export class ModelChangedError extends CodedError {
  constructor(runId: string, problems: readonly string[]) {
    super(
      'MODEL_CHANGED',
      `run ${runId} cannot be retried with another model: ${problems.join('; ')} (point the endpoint back at the run's model, or start a new run)`,
    );
    this.name = 'ModelChangedError';
  }
}

export async function assertRetryModels(
  runDir: string,
  spec: RunSpec,
  info: Pick<RunGraphInfo, 'graph' | 'models' | 'missingModels'>,
  signal?: AbortSignal,
): Promise<void> {
  assertModelSetup(spec.graphName, info);
  const models = spec.models ?? info.models;
  if (models.length === 0) return;
  const reported = (await readRunManifest(runDir))?.reportedModels ?? [];
  const problems = await changedModels(info.graph, models, reported, process.env, signal);
  if (problems.length > 0) throw new ModelChangedError(spec.runId, problems);
}
