/** Why an audit cannot run: what the run was made from has changed since. */
import { CodedError } from '../errors.js';
import type { ManifestDifference } from '../store/manifest-differences.js';

/** AUDIT_MANIFEST_CHANGED: a nodeset's code or manifest, or a dataset file, differs from the run's manifest.json. */
export class AuditManifestChangedError extends CodedError {
  readonly changes: ManifestDifference[];
  constructor(runId: string, changes: ManifestDifference[]) {
    super(
      'AUDIT_MANIFEST_CHANGED',
      `run ${runId} cannot be audited: what it was made from has changed since, so a re-play would not test determinism (${changes
        .map((c) => c.message)
        .join('; ')})`,
    );
    this.changes = changes;
  }
}
