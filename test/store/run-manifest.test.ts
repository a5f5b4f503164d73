/** Run manifests over real files: a nodeset's code hash follows its files, the git commit is read from .git, differences are named. */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodesetRegistry } from '../../src/nodeset-registry/registry.js';
import { BUILTIN_NODESETS_DIR } from '../../src/paths.js';
import { manifestDifferences } from '../../src/store/manifest-differences.js';
import { buildRunManifest, gitCommitOf } from '../../src/store/run-manifest.js';

let ws: string;
beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), 'run-manifest-'));
});
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

describe('run manifest', () => {
  it("a changed code file of a workspace nodeset changes its code hash, not its manifest's; the difference is named", async () => {
    await cp(join(BUILTIN_NODESETS_DIR, 'planner'), join(ws, 'graph_nodes', 'planner'), { recursive: true });
    const manifestOf = async () => {
      const registry = await NodesetRegistry.scan({ workspaceDir: ws });
      return buildRunManifest({ graph: { nodes: [], edges: [] }, nodesets: [registry.get('planner')] });
    };
    const before = await manifestOf();
    expect(before.nodesets[0]).toMatchObject({ name: 'planner', source: 'workspace' });
    expect(await manifestOf()).toEqual(before);
    const file = join(ws, 'graph_nodes', 'planner', 'handlers.js');
    await writeFile(file, (await readFile(file, 'utf8')) + '\n// edited\n');
    const after = await manifestOf();
    expect(after.nodesets[0]!.manifestSha256).toBe(before.nodesets[0]!.manifestSha256);
    expect(after.nodesets[0]!.codeSha256).not.toBe(before.nodesets[0]!.codeSha256);
    expect(after.graphSha256).toBe(before.graphSha256);
    expect(manifestDifferences(before, after)).toEqual([
      { kind: 'nodeset_code', subject: 'planner', message: 'nodeset planner: its code differs (workspace vs workspace)' },
    ]);
    const otherNode = { ...after, runtime: { ...after.runtime, node: '99.0.0' } };
    expect(manifestDifferences(after, otherNode).map((d) => d.kind)).toEqual(['node_major']);
    expect(manifestDifferences(after, null)).toEqual([]);
  });

  it('names another model, other sampling and another reported model; nothing where a manifest records no models', async () => {
    const base = await buildRunManifest({
      graph: { nodes: [], edges: [] },
      nodesets: [],
      models: [{ node: 'llm', type: 'llm__chat', model: 'm1', baseUrl: 'http://a/v1', sampling: { temperature: 0 } }],
    });
    const a = { ...base, reportedModels: [{ node: 'llm', model: 'm1-0601', calls: 3 }] };
    const b = {
      ...base,
      models: [{ node: 'llm', type: 'llm__chat', model: 'm1', baseUrl: 'http://a/v1', sampling: { temperature: 0.7, top_p: 0.9 } }],
      reportedModels: [{ node: 'llm', model: 'm1-0901', systemFingerprint: 'fp_9', calls: 3 }],
    };
    expect(manifestDifferences(a, b)).toEqual([
      { kind: 'sampling', subject: 'llm', message: 'node llm: sampling temperature=0 vs temperature=0.7, top_p=0.9' },
      { kind: 'reported_model', subject: 'llm', message: 'node llm: the provider reported m1-0601 vs m1-0901 (fp_9)' },
    ]);
    const { models: _m, ...older } = b;
    expect(manifestDifferences(a, older)).toEqual([]);
  });

  it('reads the commit from .git: a loose ref, a packed ref, a detached HEAD; none outside a checkout', async () => {
    const sha = 'a'.repeat(40);
    const repo = join(ws, 'repo');
    await mkdir(join(repo, '.git', 'refs', 'heads'), { recursive: true });
    await writeFile(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(join(repo, '.git', 'refs', 'heads', 'main'), `${sha}\n`);
    expect(gitCommitOf(repo)).toBe(sha);
    await writeFile(join(repo, '.git', 'HEAD'), 'ref: refs/heads/packed\n');
    await writeFile(join(repo, '.git', 'packed-refs'), `# pack-refs\n${'b'.repeat(40)} refs/heads/packed\n`);
    expect(gitCommitOf(repo)).toBe('b'.repeat(40));
    // A linked worktree: `.git` is a file naming its git dir, whose refs live in the common dir.
    const wt = join(ws, 'wt');
    await mkdir(join(repo, '.git', 'worktrees', 'wt'), { recursive: true });
    await mkdir(wt);
    await writeFile(join(wt, '.git'), `gitdir: ${join(repo, '.git', 'worktrees', 'wt')}\n`);
    await writeFile(join(repo, '.git', 'worktrees', 'wt', 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(join(repo, '.git', 'worktrees', 'wt', 'commondir'), '../..\n');
    expect(gitCommitOf(wt)).toBe(sha);
    await writeFile(join(repo, '.git', 'HEAD'), `${'c'.repeat(40)}\n`);
    expect(gitCommitOf(repo)).toBe('c'.repeat(40));
    expect(gitCommitOf(join(ws, 'graph_nodes'))).toBeUndefined();
  });
});
