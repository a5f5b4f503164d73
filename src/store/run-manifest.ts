/**
 * manifest.json of a run directory: what a run was made from, recorded at submit so two runs
 * can be told apart beyond their config — the project's version and git commit, SHA-256 of the
 * frozen graph, of each nodeset's manifest and code, of the dataset's files, the Node
 * version and platform it ran on, the model each model-backed node asks (frozen at submit) and,
 * once the run has played, the models the providers said answered.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { byName } from '../core/by-name.js';
import { PACKAGE_ROOT } from '../paths.js';
import type { FrozenModel } from '../graph/model-setup.js';
import { readJson, writeJsonAtomic } from './atomic.js';
import { sumReportedModels, type ReportedModel } from './reported-models.js';

export const MANIFEST_FILE = 'manifest.json';

export interface ManifestFile {
  /** Path relative to the folder hashed, with `/` separators. */
  path: string;
  sha256: string;
  bytes: number;
}

export interface NodesetFingerprint {
  name: string;
  /** builtin | workspace | remote. */
  source: string;
  /** SHA-256 of manifest.json as it is on disk (of its canonical JSON for a remote nodeset, which has no file here). */
  manifestSha256: string;
  /** SHA-256 over every other file of the nodeset's folder in sorted path order; absent for a remote nodeset. */
  codeSha256?: string;
  /** How many files codeSha256 covers. */
  codeFiles?: number;
}

export interface DatasetFingerprint {
  name: string;
  source: string;
  /** The split the run reads; absent when the dataset's default split is used and not named. */
  split?: string;
  /** SHA-256 over the files below, in sorted path order. */
  sha256: string;
  files: ManifestFile[];
}

export interface RunManifest {
  version: 1;
  project: { name: string; version: string; gitCommit?: string };
  /** SHA-256 of the frozen graph's canonical JSON (keys sorted). */
  graphSha256: string;
  /** Every nodeset the graph uses, sorted by name. */
  nodesets: NodesetFingerprint[];
  /** Present when the run's episodes come from a dataset. */
  dataset?: DatasetFingerprint;
  runtime: { node: string; platform: string; arch: string };
  /** What each model-backed node asks, as frozen in spec.json; absent when the graph calls no model. */
  models?: FrozenModel[];
  /**
   * What the providers said answered, summed over the run's episode records (every attempt's
   * latest record of each play): written when the run ends; absent before, or when no answer named a model.
   */
  reportedModels?: ReportedModel[];
}

/** What the manifest is built from: the nodesets and dataset are resolved by the caller. */
export interface ManifestInput {
  graph: unknown;
  nodesets: ReadonlyArray<{ name: string; source: string; dir: string; manifest: unknown }>;
  dataset?: { name: string; source: string; dir: string; split?: string | undefined } | undefined;
  models?: readonly FrozenModel[] | undefined;
}

const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** JSON with object keys sorted, so equal values hash equal whatever order their keys were written in. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const obj = v as Record<string, unknown>;
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** Folders never part of a nodeset's code (installed dependencies, caches, VCS). */
const SKIPPED_DIRS = new Set(['node_modules', '.git', '__pycache__', '.venv', '.mypy_cache', '.pytest_cache']);

/** Per-process cache of file hashes, keyed by path and checked by mtime and size, so a resubmit hashes nothing twice. */
const fileHashes = new Map<string, { stamp: string; sha256: string }>();

async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const s = await stat(path);
  const stamp = `${s.mtimeMs}:${s.size}`;
  const hit = fileHashes.get(path);
  if (hit?.stamp === stamp) return { sha256: hit.sha256, bytes: s.size };
  // Streamed: a dataset file of hundreds of MB is neither held whole nor hashed in one long step of the event loop.
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  const digest = hash.digest('hex');
  fileHashes.set(path, { stamp, sha256: digest });
  return { sha256: digest, bytes: s.size };
}

/** Regular files below `dir`, relative and `/`-separated, sorted by code unit (not locale) so the order is the same everywhere. */
async function listFiles(dir: string, skip: (rel: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  const walk = async (at: string) => {
    for (const e of await readdir(at, { withFileTypes: true })) {
      const full = join(at, e.name);
      if (e.isDirectory()) {
        if (!SKIPPED_DIRS.has(e.name)) await walk(full);
      } else if (e.isFile()) {
        const rel = relative(dir, full).split(sep).join('/');
        if (!skip(rel)) out.push(rel);
      }
    }
  };
  await walk(dir);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The files' hashes and one hash over them all (`path NUL sha256 LF` per file). */
async function hashFiles(dir: string, skip: (rel: string) => boolean = () => false): Promise<{ sha256: string; files: ManifestFile[] }> {
  const files: ManifestFile[] = [];
  for (const path of await listFiles(dir, skip)) files.push({ path, ...(await hashFile(join(dir, path))) });
  return { sha256: sha256(files.map((f) => `${f.path}\u0000${f.sha256}\n`).join('')), files };
}

/** The nodeset's manifest and code hashes; the manifest file is `manifest.json` in its folder. */
export async function fingerprintNodeset(n: ManifestInput['nodesets'][number]): Promise<NodesetFingerprint> {
  const manifestPath = n.dir ? join(n.dir, 'manifest.json') : '';
  if (!n.dir || !existsSync(manifestPath)) return { name: n.name, source: n.source, manifestSha256: sha256(canonicalJson(n.manifest)) };
  const code = await hashFiles(n.dir, (rel) => rel === 'manifest.json');
  return {
    name: n.name,
    source: n.source,
    manifestSha256: (await hashFile(manifestPath)).sha256,
    codeSha256: code.sha256,
    codeFiles: code.files.length,
  };
}

/** The git commit of a checkout at `root`, read from .git without spawning git; undefined when it is not a checkout. */
export function gitCommitOf(root: string): string | undefined {
  try {
    let gitDir = join(root, '.git');
    if (!existsSync(gitDir)) return undefined;
    // A linked worktree or submodule has a `.git` file pointing at its git dir.
    const asFile = tryRead(gitDir);
    if (asFile?.startsWith('gitdir:')) {
      const target = asFile.slice('gitdir:'.length).trim();
      gitDir = isAbsolute(target) ? target : resolve(root, target);
    }
    const head = tryRead(join(gitDir, 'HEAD'))?.trim();
    if (!head) return undefined;
    if (/^[0-9a-f]{40,64}$/.test(head)) return head;
    if (!head.startsWith('ref:')) return undefined;
    const ref = head.slice('ref:'.length).trim();
    const common = tryRead(join(gitDir, 'commondir'))?.trim();
    const dirs = [gitDir, ...(common ? [resolve(gitDir, common)] : [])];
    for (const d of dirs) {
      const loose = tryRead(join(d, ref))?.trim();
      if (loose && /^[0-9a-f]{40,64}$/.test(loose)) return loose;
    }
    for (const d of dirs) {
      for (const line of (tryRead(join(d, 'packed-refs')) ?? '').split('\n')) {
        const [hash, name] = line.trim().split(' ');
        if (name === ref && hash && /^[0-9a-f]{40,64}$/.test(hash)) return hash;
      }
    }
  } catch {
    // An unreadable .git is the same as none: the commit is simply not known.
  }
  return undefined;
}

function tryRead(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

let project: RunManifest['project'] | undefined;
/** package.json's name and version and the checkout's commit, read once per process. */
function projectInfo(): RunManifest['project'] {
  if (project) return project;
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { name?: string; version?: string };
  const gitCommit = gitCommitOf(PACKAGE_ROOT);
  project = { name: pkg.name ?? 'unknown', version: pkg.version ?? '0.0.0', ...(gitCommit ? { gitCommit } : {}) };
  return project;
}

export async function buildRunManifest(input: ManifestInput): Promise<RunManifest> {
  const nodesets = await Promise.all([...input.nodesets].sort(byName).map(fingerprintNodeset));
  let dataset: DatasetFingerprint | undefined;
  if (input.dataset) {
    const d = input.dataset;
    const { sha256: digest, files } = await hashFiles(d.dir);
    dataset = { name: d.name, source: d.source, ...(d.split !== undefined ? { split: d.split } : {}), sha256: digest, files };
  }
  return {
    version: 1,
    project: projectInfo(),
    graphSha256: sha256(canonicalJson(input.graph)),
    nodesets,
    ...(dataset ? { dataset } : {}),
    runtime: { node: process.versions.node, platform: process.platform, arch: process.arch },
    ...(input.models && input.models.length > 0 ? { models: [...input.models] } : {}),
  };
}

/**
 * Writes into the run's manifest the models its episode records say answered (a no-op for a run
 * without a manifest). Called as a run (or an attempt of it) ends, over all its records.
 */
export async function recordReportedModels(
  runDir: string,
  records: Iterable<{ reportedModels?: ReportedModel[] | undefined }>,
): Promise<void> {
  const manifest = await readRunManifest(runDir);
  if (!manifest) return;
  const { reportedModels: _before, ...rest } = manifest;
  const reported = sumReportedModels(records);
  await writeRunManifest(runDir, reported.length > 0 ? { ...rest, reportedModels: reported } : rest);
}

export const writeRunManifest = (runDir: string, manifest: RunManifest) => writeJsonAtomic(join(runDir, MANIFEST_FILE), manifest);

/** The run's manifest.json, or null for a run recorded before manifests existed (or one whose file is unreadable). */
export async function readRunManifest(runDir: string): Promise<RunManifest | null> {
  const path = join(runDir, MANIFEST_FILE);
  if (!existsSync(path)) return null;
  try {
    const m = await readJson<RunManifest>(path);
    return typeof m === 'object' && m !== null && typeof m.graphSha256 === 'string' ? m : null;
  } catch {
    return null;
  }
}
