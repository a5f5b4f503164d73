/**
 * The check before an audit: what the run was made from (its manifest.json) is hashed again as
 * it is now. A nodeset whose code or manifest changed, or a dataset file that changed, makes a
 * re-play meaningless, so the audit is refused naming what changed; a new project version or
 * Node version is only noted (the audit then also tests that the result did not move).
 */
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import { datasetOfRun } from '../scheduler/record-run-manifest.js';
import { manifestDifferences, type ManifestDifference } from '../store/manifest-differences.js';
import { buildRunManifest, type RunManifest } from '../store/run-manifest.js';
import type { RunSpec } from '../store/types.js';
import { AuditManifestChangedError } from './audit-errors.js';

const REFUSING: ReadonlySet<ManifestDifference['kind']> = new Set([
  'nodeset_added',
  'nodeset_removed',
  'nodeset_manifest',
  'nodeset_code',
  'dataset',
  'dataset_files',
]);

export interface ManifestCheck {
  /** Differences that do not refuse the audit, in words. */
  notes: string[];
}

/** Throws AUDIT_MANIFEST_CHANGED when a nodeset or dataset file differs from the run's manifest. */
export async function checkRunManifest(
  runId: string,
  recorded: RunManifest,
  spec: RunSpec,
  nodesets: readonly NodesetEntry[],
  workspaceDir: string | undefined,
): Promise<ManifestCheck> {
  const now = await buildRunManifest({
    graph: spec.graph,
    nodesets,
    dataset: await datasetOfRun(nodesets, spec, workspaceDir),
  });
  const differences = manifestDifferences(recorded, now);
  const refusing = differences.filter((d) => REFUSING.has(d.kind));
  if (refusing.length > 0) throw new AuditManifestChangedError(runId, refusing);
  return { notes: differences.map((d) => d.message) };
}
