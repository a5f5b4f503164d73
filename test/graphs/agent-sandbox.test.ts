/**
 * The built-in agent_sandbox graph over the shell_tasks dataset, through `evalctl run` against the
 * stand-in model (scripted agents for some tasks): the solved tasks pass, the others fail with
 * the check's output as the explanation, the results are the same at 1 and 8 workers, and no
 * sandbox is left behind.
 */
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import type { RunSummary } from '../../src/store/types.js';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub.js';

const CLI = join(DIST_DIR, 'main.js');
const KEY = 'sk-sandbox-agent-93b1d2';
let stub: OpenAIStub;
let tmp: string;

beforeAll(async () => {
  stub = await startOpenAIStub({ expectedKey: KEY });
  tmp = await mkdtemp(join(tmpdir(), 'agent-sandbox-'));
  // A sandbox runs as a uid of its own, which must reach its folder.
  await chmod(tmp, 0o711);
});
afterAll(async () => {
  await stub.close();
  await rm(tmp, { recursive: true, force: true });
});

async function run(workers: number): Promise<RunSummary> {
  const r = await execa(
    process.execPath,
    [
      CLI,
      'run',
      'agent_sandbox',
      '--episodes',
      '20',
      '--workers',
      String(workers),
      '--dataset',
      'shell_tasks',
      '--outputs',
      join(tmp, 'outputs'),
      '--json',
    ],
    {
      reject: false,
      env: {
        OPENAI_BASE_URL: stub.baseURL,
        OPENAI_API_KEY: KEY,
        OPENAI_MODEL: 'stub-model',
        EVAL_SANDBOX_DIR: join(tmp, 'sandboxes'),
        EVAL_LLM_CACHE_DIR: join(tmp, `cache${workers}`),
      },
    },
  );
  if (!r.stdout.startsWith('{')) throw new Error(`evalctl run failed (${r.exitCode}): ${r.stderr}`);
  return JSON.parse(r.stdout) as RunSummary;
}

const outcome = (s: RunSummary) =>
  s.episodes.map((e) => {
    const { llm_latency_ms, tool_ms, ...metrics } = e.metrics as Record<string, unknown>;
    return { status: e.status, metrics };
  });

describe('agent_sandbox over shell_tasks', { timeout: 180_000 }, () => {
  it('passes the solved tasks, fails the others with the check output, the same at 1 and 8 workers', async () => {
    const one = await run(1);
    expect(one.status).toBe('COMPLETED');
    const byTask = Object.fromEntries(one.episodes.map((e) => [e.sampleId, e]));
    const passed = one.episodes.filter((e) => e.metrics.correct === 1).map((e) => e.sampleId);
    expect(passed.sort()).toEqual(
      [
        'count-errors',
        'csv-total',
        'decode-flag',
        'extract-port',
        'find-flag',
        'fix-add',
        'fix-reverse',
        'make-executable',
        'rename-draft',
        'repair-json',
        'setup-sum',
        'sort-names',
      ].sort(),
    );
    expect(one.episodes.every((e) => e.status === 'COMPLETED')).toBe(true);
    expect(byTask['fix-max']!.scores?.[0]?.explanation).toMatch(
      /^check failed: check exited with code 1: Traceback[\s\S]*AssertionError: biggest = 4$/,
    );
    expect(byTask['sum-values']!.scores?.[0]?.explanation).toBe('check failed: check exited with code 1: answer 42, expected 142');
    expect(byTask['fix-add']!.metrics).toMatchObject({ tool_calls: 3, tool_errors: 0 });
    const eight = await run(8);
    expect(outcome(eight)).toEqual(outcome(one));
    const left = (await readdir(join(tmp, 'sandboxes')).catch(() => [])) as string[];
    expect(left).toEqual([]);
  });
});
