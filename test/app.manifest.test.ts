/** Run.manifest over GraphQL for runs queued on a real server: written at submit, the same for two runs of one graph. */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_EVAL, startServer, waitFor, writeDatasetProbeGraph, type TestServer } from './app.helpers.js';

let server: TestServer;
let ws: string;

beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), 'app-manifest-'));
  await writeDatasetProbeGraph(ws, 'manifest_probe');
  server = await startServer({ scheduler: { workspaceDir: ws } });
});
afterAll(async () => {
  await server?.stop();
  await rm(ws, { recursive: true, force: true });
});

const MANIFEST = `query($id: ID!) { run(id: $id) { status manifest {
  projectVersion gitCommit graphSha256 nodeVersion platform arch
  nodesets { name source manifestSha256 codeSha256 codeFiles }
  dataset { name source split sha256 files { path sha256 bytes } }
} } }`;

async function runOnce(): Promise<{ id: string; manifest: any }> {
  const started = await server.gql<{ startEval: { runId: string } }>(START_EVAL, {
    input: { graphName: 'manifest_probe', episodeCount: 1, dataset: 'arith', split: 'dev' },
  });
  expect(started.errors).toBeUndefined();
  const id = started.data!.startEval.runId;
  const run = await waitFor(
    'the run to finish',
    async () => {
      const r = await server.gql<{ run: any }>(MANIFEST, { id });
      return ['COMPLETED', 'FAILED'].includes(r.data?.run?.status) ? r.data!.run : undefined;
    },
    60_000,
  );
  expect(run.status).toBe('COMPLETED');
  return { id, manifest: run.manifest };
}

describe('Run.manifest', () => {
  it('records version, graph, nodeset and dataset hashes and the runtime; two runs of one graph record the same', async () => {
    const a = await runOnce();
    const b = await runOnce();
    expect(existsSync(join(server.dir, 'outputs', 'eval_runs', a.id, 'manifest.json'))).toBe(true);
    const hex = expect.stringMatching(/^[0-9a-f]{64}$/);
    expect(a.manifest).toMatchObject({
      projectVersion: expect.stringMatching(/^\d+\.\d+\.\d+/),
      graphSha256: hex,
      nodeVersion: process.versions.node,
      platform: process.platform,
      arch: process.arch,
      nodesets: [{ name: 'env_dataset', source: 'builtin', manifestSha256: hex, codeSha256: hex, codeFiles: expect.any(Number) }],
      dataset: {
        name: 'arith',
        source: 'builtin',
        split: 'dev',
        sha256: hex,
        files: [
          { path: 'dataset.json', sha256: hex, bytes: expect.any(Number) },
          { path: 'dev.jsonl', sha256: hex, bytes: expect.any(Number) },
          { path: 'test.jsonl', sha256: hex, bytes: expect.any(Number) },
        ],
      },
    });
    expect(b.manifest).toEqual(a.manifest);
  });
});
