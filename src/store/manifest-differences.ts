/**
 * How two runs differ beyond their graph's shape, from their manifests: what a comparison warns
 * about, since a score difference may then come from another model, changed code, data or runtime.
 */
import { canonicalJson, type RunManifest } from './run-manifest.js';
import type { ReportedModel } from './reported-models.js';

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
  | 'platform'
  | 'model'
  | 'sampling'
  | 'reported_model';

export interface ManifestDifference {
  kind: ManifestDifferenceKind;
  /** The nodeset, dataset or node concerned, when there is one. */
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
  out.push(...modelDifferences(a, b));
  if (major(a.runtime.node) !== major(b.runtime.node))
    out.push({ kind: 'node_major', message: `Node ${a.runtime.node} vs ${b.runtime.node}` });
  if (a.runtime.platform !== b.runtime.platform || a.runtime.arch !== b.runtime.arch)
    out.push({
      kind: 'platform',
      message: `platform ${a.runtime.platform}/${a.runtime.arch} vs ${b.runtime.platform}/${b.runtime.arch}`,
    });
  return out;
}

const showSampling = (s: Record<string, unknown>): string =>
  Object.keys(s).length === 0
    ? 'none set'
    : Object.entries(s)
        .sort(([x], [y]) => (x < y ? -1 : 1))
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(', ');

/** "fake-1 (fp_a)": the models a node's answers named, with their fingerprints. */
function reportedOf(list: readonly ReportedModel[], node: string): string {
  const names = list.filter((r) => r.node === node).map((r) => (r.systemFingerprint ? `${r.model} (${r.systemFingerprint})` : r.model));
  return [...new Set(names)].join(', ');
}

/**
 * Per model-backed node both runs have: another model or endpoint asked (`model`), other
 * sampling parameters (`sampling`), and, from the answers, another model the provider said
 * answered (`reported_model`: the same name asked may be served by another snapshot). Compared
 * only where both manifests record models (older runs, and an audit's fresh manifest, do not).
 */
function modelDifferences(a: RunManifest, b: RunManifest): ManifestDifference[] {
  if (!a.models || !b.models) return [];
  const out: ManifestDifference[] = [];
  const mb = new Map(b.models.map((m) => [m.node, m]));
  for (const x of a.models) {
    const y = mb.get(x.node);
    if (!y) continue;
    if (x.model !== y.model || x.baseUrl !== y.baseUrl) {
      const at = x.baseUrl !== y.baseUrl ? ` (at ${x.baseUrl} vs ${y.baseUrl})` : '';
      out.push({ kind: 'model', subject: x.node, message: `node ${x.node}: model ${x.model} vs ${y.model}${at}` });
    }
    if (canonicalJson(x.sampling) !== canonicalJson(y.sampling))
      out.push({
        kind: 'sampling',
        subject: x.node,
        message: `node ${x.node}: sampling ${showSampling(x.sampling)} vs ${showSampling(y.sampling)}`,
      });
    const ra = reportedOf(a.reportedModels ?? [], x.node);
    const rb = reportedOf(b.reportedModels ?? [], x.node);
    if (ra !== '' && rb !== '' && ra !== rb)
      out.push({ kind: 'reported_model', subject: x.node, message: `node ${x.node}: the provider reported ${ra} vs ${rb}` });
  }
  return out;
}
