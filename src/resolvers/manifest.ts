/**
 * `Run.manifest`: the run's manifest.json (docs/graphql.md, "Reproducibility") as typed fields.
 */
import { isValidRunId, runDirPath } from '../store/run-dir.js';
import {
  readRunManifest,
  type DatasetFingerprint,
  type ManifestFile,
  type NodesetFingerprint,
  type RunManifest,
} from '../store/run-manifest.js';
import { builder } from './builder.js';
import { RunRef } from './refs.js';
import type { RunSource } from './run-source.js';

const ManifestFileRef = builder.objectRef<ManifestFile>('ManifestFile').implement({
  description: 'One file a run read, as it was at submit.',
  fields: (t) => ({
    path: t.exposeString('path', { description: "Relative to the dataset's folder, `/`-separated." }),
    sha256: t.exposeString('sha256', { description: 'SHA-256 of its bytes.' }),
    bytes: t.exposeInt('bytes', { description: 'Its size.' }),
  }),
});

const NodesetFingerprintRef = builder.objectRef<NodesetFingerprint>('NodesetFingerprint').implement({
  description: 'A nodeset the graph uses, as it was at submit.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The nodeset.' }),
    source: t.exposeString('source', { description: 'builtin, workspace or remote.' }),
    manifestSha256: t.exposeString('manifestSha256', { description: 'SHA-256 of its manifest.json.' }),
    codeSha256: t.string({
      nullable: true,
      description:
        'SHA-256 over every other file of its folder in sorted path order (`path NUL sha256 LF` each); null for a remote nodeset.',
      resolve: (n) => n.codeSha256 ?? null,
    }),
    codeFiles: t.int({ nullable: true, description: 'How many files codeSha256 covers.', resolve: (n) => n.codeFiles ?? null }),
  }),
});

const DatasetFingerprintRef = builder.objectRef<DatasetFingerprint>('DatasetFingerprint').implement({
  description: "The dataset a run's episodes come from, as it was at submit.",
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The dataset.' }),
    source: t.exposeString('source', { description: 'builtin or workspace.' }),
    split: t.string({ nullable: true, description: 'The split the run reads.', resolve: (d) => d.split ?? null }),
    sha256: t.exposeString('sha256', { description: "SHA-256 over its files' hashes in sorted path order." }),
    files: t.field({ type: [ManifestFileRef], description: 'Every file of its folder, in sorted path order.', resolve: (d) => d.files }),
  }),
});

const RunManifestRef = builder.objectRef<RunManifest>('RunManifest').implement({
  description: 'What a run was made from, recorded at submit (manifest.json in its run directory).',
  fields: (t) => ({
    projectVersion: t.string({ description: "package.json's version.", resolve: (m) => m.project.version }),
    gitCommit: t.string({
      nullable: true,
      description: 'The commit of the installed checkout; null when it is not a git checkout.',
      resolve: (m) => m.project.gitCommit ?? null,
    }),
    graphSha256: t.exposeString('graphSha256', { description: "SHA-256 of the frozen graph's canonical JSON (keys sorted)." }),
    nodesets: t.field({ type: [NodesetFingerprintRef], description: 'Each nodeset the graph uses, by name.', resolve: (m) => m.nodesets }),
    dataset: t.field({
      type: DatasetFingerprintRef,
      nullable: true,
      description: 'The dataset the episodes come from; null when they come from none.',
      resolve: (m) => m.dataset ?? null,
    }),
    nodeVersion: t.string({ description: 'The Node version that submitted it.', resolve: (m) => m.runtime.node }),
    platform: t.string({ description: "Node's process.platform (linux, darwin, win32).", resolve: (m) => m.runtime.platform }),
    arch: t.string({ description: "Node's process.arch (x64, arm64).", resolve: (m) => m.runtime.arch }),
  }),
});

builder.objectField(RunRef, 'manifest', (t) =>
  t.field({
    type: RunManifestRef,
    nullable: true,
    description:
      'What the run was made from: project version and commit, hashes of the frozen graph, of each nodeset and of the dataset files, Node version and platform. Null for a run without manifest.json.',
    resolve: (src: RunSource, _a, ctx) => (isValidRunId(src.row.id) ? readRunManifest(runDirPath(ctx.outputsDir, src.row.id)) : null),
  }),
);
