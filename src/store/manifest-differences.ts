/**
 * How two runs differ beyond their config, from their manifests: what a comparison warns
 * about, since a score difference may then come from changed code, data or runtime.
 */
import type { RunManifest } from './run-manifest.js';

export type ManifestDifferenceKind =
  | 'project_version'
  | 'git_commit'
  | 'nodeset_added'
  | 'nodeset_removed'
  | 'nodeset_manifest'
  | 'nodeset_code'
  | 'dataset'
  | 'dataset_files'
  | 'node_major'
  | 'platform';

export interface ManifestDifference {
  kind: ManifestDifferenceKind;
  /** The nodeset or dataset concerned, when there is one. */
  subject?: string;
  /** One line a person can read. */
  message: string;
}

const major = (v: string) => v.split('.')[0] ?? v;

/**
 * The differences that are not config: the frozen graph's hash is left out (overrides change it,
 * and those are config the comparison shows anyway). Empty when either run has no manifest.
 */
export function manifestDifferences(a: RunManifest | null | undefined, b: RunManifest | null | undefined): ManifestDifference[] {
  if (!a || !b) return [];
  const out: ManifestDifference[] = [];
  if (a.project.version !== b.project.version)
    out.push({ kind: 'project_version', message: `project version ${a.project.version} vs ${b.project.version}` });
  if (a.project.gitCommit && b.project.gitCommit && a.project.gitCommit !== b.project.gitCommit)
    out.push({
      kind: 'git_commit',
      message: `git commit ${a.project.gitCommit.slice(0, 12)} vs ${b.project.gitCommit.slice(0, 12)}`,
    });
  const nsA = new Map(a.nodesets.map((n) => [n.name, n]));
  const nsB = new Map(b.nodesets.map((n) => [n.name, n]));
  for (const [name, x] of nsA) {
    const y = nsB.get(name);
    if (!y) {
      out.push({ kind: 'nodeset_removed', subject: name, message: `nodeset ${name} is used only by the first run` });
      continue;
    }
    if (x.manifestSha256 !== y.manifestSha256)
      out.push({ kind: 'nodeset_manifest', subject: name, message: `nodeset ${name}: its manifest differs` });
    if (x.codeSha256 !== y.codeSha256)
      out.push({ kind: 'nodeset_code', subject: name, message: `nodeset ${name}: its code differs (${x.source} vs ${y.source})` });
  }
  for (const name of nsB.keys())
    if (!nsA.has(name)) out.push({ kind: 'nodeset_added', subject: name, message: `nodeset ${name} is used only by the second run` });
  const da = a.dataset;
  const db = b.dataset;
  if (da && db && (da.name !== db.name || da.split !== db.split)) {
    out.push({ kind: 'dataset', subject: db.name, message: `dataset ${da.name}/${da.split ?? '-'} vs ${db.name}/${db.split ?? '-'}` });
  } else if (da && db && da.sha256 !== db.sha256) {
    const fa = new Map(da.files.map((f) => [f.path, f.sha256]));
    const fb = new Map(db.files.map((f) => [f.path, f.sha256]));
    const changed = [...new Set([...fa.keys(), ...fb.keys()])].filter((p) => fa.get(p) !== fb.get(p)).sort();
    out.push({ kind: 'dataset_files', subject: da.name, message: `dataset ${da.name}: files differ (${changed.join(', ')})` });
  } else if (!da !== !db) {
    out.push({ kind: 'dataset', message: `only the ${da ? 'first' : 'second'} run reads a dataset` });
  }
  if (major(a.runtime.node) !== major(b.runtime.node))
    out.push({ kind: 'node_major', message: `Node ${a.runtime.node} vs ${b.runtime.node}` });
  if (a.runtime.platform !== b.runtime.platform || a.runtime.arch !== b.runtime.arch)
    out.push({
      kind: 'platform',
      message: `platform ${a.runtime.platform}/${a.runtime.arch} vs ${b.runtime.platform}/${b.runtime.arch}`,
    });
  return out;
}
