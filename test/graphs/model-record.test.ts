/**
 * The model is part of the run: qa_llm through `evalctl` against stand-in endpoints that each
 * serve one named model. The model, endpoint and sampling are frozen in spec.json at submit; the
 * model each answer named lands in the manifest and the report; compare names a model
 * difference; a retry plays the frozen model and is refused when the endpoint now serves another
 * (or when no model can be resolved); repeats above temperature 0 are never one cached answer.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import type { RunReport } from '../../src/store/report.js';
import type { RunManifest } from '../../src/store/run-manifest.js';
import type { RunSpec, RunSummary } from '../../src/store/types.js';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub.js';
import { startServer, waitFor } from '../app.helpers.js';

const CLI = join(DIST_DIR, 'main.js');
const KEY = 'sk-model-record-51d0c2';
let fake1: OpenAIStub;
let fake2: OpenAIStub;
let tmp: string;
let outputs: string;

beforeAll(async () => {
  fake1 = await startOpenAIStub({ model: 'fake-1', systemFingerprint: 'fp_one' });
  fake2 = await startOpenAIStub({ model: 'fake-2', systemFingerprint: 'fp_two' });
  tmp = await mkdtemp(join(tmpdir(), 'model-record-'));
  outputs = join(tmp, 'outputs');
});
afterAll(async () => {
  await Promise.all([fake1.close(), fake2.close()]);
  await rm(tmp, { recursive: true, force: true });
});

function evalctl(args: string[], env: Record<string, string | undefined>) {
  return execa(process.execPath, [CLI, ...args], {
    reject: false,
    extendEnv: false,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, OPENAI_API_KEY: KEY, EVAL_LLM_CACHE_DIR: join(tmp, 'cache'), ...env },
  });
}

async function run(stub: OpenAIStub, model: string | undefined, extra: string[] = []): Promise<RunSummary> {
  const r = await evalctl(
    ['run', 'qa_llm', '--episodes', '4', '--dataset', 'arith', '--split', 'test', '--outputs', outputs, '--json', ...extra],
    { OPENAI_BASE_URL: stub.baseURL, OPENAI_MODEL: model },
  );
  if (!r.stdout.startsWith('{')) throw new Error(`evalctl run failed (${r.exitCode}): ${r.stderr}`);
  return JSON.parse(r.stdout) as RunSummary;
}

const MODELS = `query R($id: ID!) { run(id: $id) { models { node type model baseUrl sampling reported { model systemFingerprint calls } repeatsNote } } }`;

const runDir = (runId: string) => join(outputs, 'eval_runs', runId);
const readJson = async <T>(runId: string, file: string): Promise<T> => JSON.parse(await readFile(join(runDir(runId), file), 'utf8')) as T;

describe('two qa_llm runs against two models', () => {
  it("freezes each run's model, records what answered, and compare names the difference", async () => {
    const a = await run(fake1, 'fake-1');
    const b = await run(fake2, 'fake-2');
    expect(a.statusCounts).toEqual({ COMPLETED: 4 });

    const spec = await readJson<RunSpec>(a.runId, 'spec.json');
    expect(spec.models).toEqual([
      { node: 'llm', type: 'llm__chat', model: 'fake-1', baseUrl: fake1.baseURL, sampling: { temperature: 0, max_tokens: 512 } },
    ]);
    // The frozen graph asks the model itself: the environment no longer decides.
    expect(spec.graph?.nodes.find((n) => n.id === 'llm')?.config).toMatchObject({ model: 'fake-1', base_url: fake1.baseURL });
    expect(JSON.stringify(spec)).not.toContain(KEY);

    const manifest = await readJson<RunManifest>(a.runId, 'manifest.json');
    expect(manifest.models?.[0]?.model).toBe('fake-1');
    expect(manifest.reportedModels).toEqual([{ node: 'llm', model: 'fake-1', systemFingerprint: 'fp_one', calls: 4 }]);
    const report = await readJson<RunReport>(b.runId, 'report.json');
    expect(report.models?.[0]).toMatchObject({ model: 'fake-2', reported: [{ model: 'fake-2', systemFingerprint: 'fp_two', calls: 4 }] });

    const c = await evalctl(['compare', a.runId, b.runId, '--outputs', outputs, '--json'], {});
    expect(c.exitCode, c.stderr).toBe(0);
    const warnings = (JSON.parse(c.stdout) as { candidates: Array<{ warnings: string[] }> }).candidates[0]!.warnings;
    expect(warnings).toContain(`node llm: model fake-1 vs fake-2 (at ${fake1.baseURL} vs ${fake2.baseURL})`);
    expect(warnings).toContain('node llm: the provider reported fake-1 (fp_one) vs fake-2 (fp_two)');

    const text = await evalctl(['report', b.runId, '--outputs', outputs], {});
    expect(text.stdout).toContain(
      `llm (llm__chat): fake-2 at ${fake2.baseURL} (temperature=0, max_tokens=512); answered by fake-2 (fp_two) ×4`,
    );

    // The API answers the same from the run's files.
    const server = await startServer({ outputsDir: outputs });
    try {
      const models = await waitFor('the run in the catalog', async () => {
        const r = await server.gql<{ run: { models: unknown[] } | null }>(MODELS, { id: a.runId });
        return r.data?.run?.models;
      });
      expect(models).toEqual([
        {
          node: 'llm',
          type: 'llm__chat',
          model: 'fake-1',
          baseUrl: fake1.baseURL,
          sampling: { temperature: 0, max_tokens: 512 },
          reported: [{ model: 'fake-1', systemFingerprint: 'fp_one', calls: 4 }],
          repeatsNote: null,
        },
      ]);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('refuses a retry once the endpoint serves another model, naming both; plays the frozen model otherwise', async () => {
    const flaky = await startOpenAIStub({ model: 'fake-1', faultEvery: 2, faultKind: 500 });
    try {
      const first = await run(flaky, 'fake-1', ['--set', 'llm.max_retries=0']);
      expect(first.statusCounts.INFRA_ERROR).toBe(2);
      flaky.setOptions({ model: 'fake-2' });
      const refused = await evalctl(['retry', first.runId, '--outputs', outputs], { OPENAI_MODEL: 'fake-1' });
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr).toContain(`the run played model fake-1; ${flaky.baseURL} now serves fake-2`);

      // Back on fake-1, with the environment naming another model and no base URL: the frozen ones are played.
      flaky.setOptions({ model: 'fake-1' });
      const retried = await evalctl(['retry', first.runId, '--outputs', outputs, '--json'], { OPENAI_MODEL: 'something-else' });
      expect(retried.exitCode, retried.stderr).toBe(0);
      expect((JSON.parse(retried.stdout) as RunSummary).statusCounts).toEqual({ COMPLETED: 4 });
      const manifest = await readJson<RunManifest>(first.runId, 'manifest.json');
      expect(manifest.reportedModels?.map((r) => r.model)).toEqual(['fake-1']);

      // A run frozen before models were recorded, retried with no model anywhere: refused as a submit is.
      const specPath = join(runDir(first.runId), 'spec.json');
      const spec = JSON.parse(await readFile(specPath, 'utf8')) as RunSpec;
      const { models: _m, ...older } = spec;
      for (const n of older.graph!.nodes) if (n.config) delete n.config.model;
      await writeFile(specPath, JSON.stringify(older));
      const unnamed = await evalctl(['retry', first.runId, '--outputs', outputs], {});
      expect(unnamed.exitCode).toBe(2);
      expect(unnamed.stderr).toContain('node "llm" (llm__chat) names no model');
    } finally {
      await flaky.close();
    }
  }, 120_000);
});

describe('repeats and the response cache', () => {
  it('makes 3 calls per episode at temperature 0.7 with the cache on, and one at temperature 0', async () => {
    const before = fake1.stats().completions;
    const sampled = await run(fake1, 'fake-1', ['--repeats', '3', '--set', 'llm.temperature=0.7', '--set', 'llm.cache=true']);
    expect(sampled.statusCounts).toEqual({ COMPLETED: 12 });
    expect(fake1.stats().completions - before).toBe(12);
    // The cache is on: the same run again is answered from it, repeat by repeat.
    const again = await run(fake1, 'fake-1', ['--repeats', '3', '--set', 'llm.temperature=0.7', '--set', 'llm.cache=true']);
    expect(fake1.stats().completions - before).toBe(12);
    expect(again.episodes.every((e) => e.metrics.llm_cache_hits === 1)).toBe(true);
    const report = await readJson<RunReport>(sampled.runId, 'report.json');
    expect(report.models?.[0]?.repeatsNote).toContain('each of the 3 repeats asks the model for its own answer');

    const greedy = await run(fake2, 'fake-2', ['--repeats', '3', '--episode-offset', '8']);
    expect(greedy.statusCounts).toEqual({ COMPLETED: 12 });
    expect(greedy.episodes.filter((e) => e.metrics.llm_cache_hits === 0)).toHaveLength(4);
    const note = (await readJson<RunReport>(greedy.runId, 'report.json')).models?.[0]?.repeatsNote;
    expect(note).toContain('identical by construction');
  }, 120_000);
});
