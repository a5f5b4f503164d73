/**
 * Model calls traced: each `llm_call` event of an episode becomes a `chat <model>` span under its
 * step span, with the model, the token counts and whether the cache answered (a re-run is cached).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR, PACKAGE_ROOT } from '../../src/paths.js';
import type { RunSummary } from '../../src/store/types.js';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';

const CLI = join(DIST_DIR, 'main.js');
const WORKSPACE = join(PACKAGE_ROOT, 'test', 'fixtures', 'llm-workspace');
const KEY = 'sk-trace-test-3b9d41';
let stub: OpenAIStub;
let receiver: OtlpReceiver;
let tmp: string;

beforeAll(async () => {
  stub = await startOpenAIStub({ expectedKey: KEY });
  receiver = await startOtlpReceiver();
  tmp = await mkdtemp(join(tmpdir(), 'llm-traces-'));
});
afterAll(async () => {
  await stub.close();
  await receiver.close();
  await rm(tmp, { recursive: true, force: true });
});

async function run(): Promise<RunSummary> {
  const r = await execa(
    process.execPath,
    [
      CLI,
      'run',
      'llm_fixture_qa',
      '--episodes',
      '2',
      '--outputs',
      join(tmp, 'outputs'),
      '--json',
      '--set',
      `llm.base_url="${stub.baseURL}"`,
    ],
    {
      reject: false,
      env: {
        ACTIVE_WORKSPACE_DIR: WORKSPACE,
        EVAL_LLM_ENDPOINTS: stub.baseURL,
        OPENAI_API_KEY: KEY,
        EVAL_LLM_CACHE_DIR: '',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
        TRACEPARENT: '',
      },
    },
  );
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as RunSummary;
}

describe('model-call spans', () => {
  it('one chat span per call under its step, with model, tokens and cache hit; a re-run is answered from the cache', async () => {
    const first = await run();
    expect(first.statusCounts).toEqual({ COMPLETED: 2 });
    const calls = () => receiver.spans.filter((s) => s.name === 'chat stub-model');
    expect(calls()).toHaveLength(2);
    for (const c of calls()) {
      const step = receiver.spans.find((s) => s.spanId === c.parentSpanId)!;
      expect(step.name).toBe('step');
      expect(receiver.spans.find((s) => s.spanId === step.parentSpanId)!.name).toBe('episode');
      expect(c.traceId).toBe(step.traceId);
      expect(c.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'stub-model',
        'batch_eval.node.id': 'llm',
        'batch_eval.llm.cache_hit': false,
        'batch_eval.run.id': first.runId,
      });
      expect(c.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(c.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    }
    const tokens = calls().reduce((n, c) => n + Number(c.attributes['gen_ai.usage.input_tokens']), 0);
    expect(tokens).toBe(first.episodes.reduce((n, e) => n + Number(e.metrics.prompt_tokens), 0));

    const before = calls().length;
    const second = await run();
    const cached = calls().slice(before);
    expect(cached).toHaveLength(2);
    expect(
      cached.every((c) => c.attributes['batch_eval.llm.cache_hit'] === true && c.attributes['batch_eval.run.id'] === second.runId),
    ).toBe(true);
  });
});
