/**
 * The built-in model-backed graphs over the built-in datasets, end to end through the real
 * `evalctl run` / `evalctl rescore` (real eval process, hosts and openai client) against one
 * stand-in server: worker count never changes a result, the cache and rescoring call no model,
 * the call budget, retries and a dead endpoint, clear errors before anything runs, the report,
 * and the API key nowhere in the outputs.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR, PACKAGE_ROOT } from '../../src/paths.js';
import type { RunReport } from '../../src/store/report.js';
import type { EpisodeRecord, RunSummary } from '../../src/store/types.js';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub.js';
import { filesContaining, readEvents } from '../support/run-files.js';

const CLI = join(DIST_DIR, 'main.js');
const KEY = 'sk-done-when-7c41e9b2d6f08a35';
let stub: OpenAIStub;
let tmp: string;
let outputs: string;
let workspace: string;

beforeAll(async () => {
  stub = await startOpenAIStub({ expectedKey: KEY });
  tmp = await mkdtemp(join(tmpdir(), 'llm-done-'));
  outputs = join(tmp, 'outputs');
  workspace = join(tmp, 'workspace');
  await mkdir(join(workspace, 'datasets', 'broken'), { recursive: true });
  await writeFile(
    join(workspace, 'datasets', 'broken', 'test.jsonl'),
    '{"id":"a","input":"What is 2 + 2?","target":4}\n{"id":"b","input":"What is 3 + 3?","target":6\n',
  );
  await mkdir(join(workspace, 'graphs'), { recursive: true });
  const qa = JSON.parse(await readFile(join(PACKAGE_ROOT, 'graphs', 'qa_llm.json'), 'utf8')) as {
    name: string;
    nodes: Array<{ id: string; type: string }>;
  };
  qa.name = 'qa_fuzzy';
  qa.nodes.find((n) => n.id === 'score')!.type = 'score__fuzzy';
  await writeFile(join(workspace, 'graphs', 'qa_fuzzy.json'), JSON.stringify(qa));
});
afterAll(async () => {
  await stub.close();
  await rm(tmp, { recursive: true, force: true });
});

interface Cli {
  exitCode: number;
  stderr: string;
  summary?: RunSummary;
}

/** `evalctl run <graph> …` with the key in the environment and the cache in `cache` ('' = the default under outputs). */
async function run(
  graph: string,
  args: string[],
  sets: string[],
  opts: { cache?: string; env?: Record<string, string> } = {},
): Promise<Cli> {
  const r = await execa(
    process.execPath,
    [CLI, 'run', graph, '--outputs', outputs, '--json', ...args, ...sets.flatMap((s) => ['--set', s])],
    {
      reject: false,
      env: {
        ACTIVE_WORKSPACE_DIR: workspace,
        OPENAI_API_KEY: KEY,
        OPENAI_MODEL: 'stand-in-model',
        EVAL_LLM_CACHE_DIR: opts.cache ?? '',
        // The stand-in is an endpoint the operator knows: runs may name it with --set llm.base_url.
        EVAL_LLM_ENDPOINTS: stub.baseURL,
        ...opts.env,
      },
    },
  );
  return {
    exitCode: r.exitCode ?? -1,
    stderr: r.stderr,
    ...(r.stdout.startsWith('{') ? { summary: JSON.parse(r.stdout) as RunSummary } : {}),
  };
}

async function runOk(
  graph: string,
  args: string[],
  sets: string[],
  opts: { cache?: string; env?: Record<string, string> } = {},
): Promise<RunSummary> {
  const r = await run(graph, args, sets, opts);
  if (!r.summary) throw new Error(`evalctl run failed (${r.exitCode}): ${r.stderr}`);
  return r.summary;
}

const atStub = () => `llm.base_url="${stub.baseURL}"`;
const metric = (s: RunSummary, name: string) => s.aggregateMetrics.find((m) => m.name === name);
const sum = (s: RunSummary, name: string) => s.episodes.reduce((t, e) => t + Number(e.metrics[name] ?? 0), 0);
const report = async (s: RunSummary): Promise<RunReport> =>
  JSON.parse(await readFile(join(outputs, 'eval_runs', s.runId, 'report.json'), 'utf8')) as RunReport;
const runDirs = async (): Promise<string[]> => (existsSync(join(outputs, 'eval_runs')) ? await readdir(join(outputs, 'eval_runs')) : []);

/** Timing fields (docs/llm.md): the only ones allowed to differ between worker counts or cache states. */
const TIMING_METRICS = new Set(['llm_latency_ms', 'durationMs']);
const episodeResult = (e: EpisodeRecord, drop: Set<string>) => ({
  index: e.index,
  episodeId: e.episodeId,
  sampleId: e.sampleId,
  cluster: e.cluster,
  status: e.status,
  steps: e.steps,
  seed: e.seed,
  error: e.error,
  scores: e.scores,
  metrics: Object.fromEntries(Object.entries(e.metrics).filter(([k]) => !drop.has(k))),
});
/** The result of a run as bytes, timing fields (and `also`) aside. */
const resultBytes = (s: RunSummary, also: string[] = []): string => {
  const drop = new Set([...TIMING_METRICS, ...also]);
  return JSON.stringify({
    episodes: s.episodes.map((e) => episodeResult(e, drop)),
    aggregates: s.aggregateMetrics.filter((m) => !drop.has(m.name)),
    byTask: Object.fromEntries(Object.entries(s.aggregateByTask).map(([t, ms]) => [t, ms.filter((m) => !drop.has(m.name))])),
    statusCounts: s.statusCounts,
  });
};

describe('qa_llm and react_llm over the built-in datasets through evalctl', () => {
  let qa: RunSummary;

  it('qa_llm over 60 samples: 1, 4 and 16 workers give byte-identical results; a warm re-run and a rescore call the model 0 times', async () => {
    const runs: RunSummary[] = [];
    for (const workers of [1, 4, 16]) {
      stub.reset();
      // Each its own fresh cache: llm_cache_hits depends on the cache, not on the workers.
      const s = await runOk('qa_llm', ['--episodes', '60', '--workers', String(workers), '--split', 'test'], [atStub()], {
        cache: join(tmp, `cache-qa-${workers}`),
      });
      expect(stub.stats()).toMatchObject({ completions: 60, unauthorized: 0 });
      runs.push(s);
    }
    [qa] = runs as [RunSummary];
    expect(qa.statusCounts).toEqual({ COMPLETED: 60 });
    // The stand-in answers the two-step template wrongly (12 of 60), everything else right.
    expect(metric(qa, 'correct')).toMatchObject({ mean: 0.8, count: 60 });
    expect(metric(qa, 'llm_cache_hits')).toMatchObject({ mean: 0 });
    expect(metric(qa, 'llm_latency_ms')).toBeDefined();
    expect(resultBytes(runs[1]!)).toBe(resultBytes(qa));
    expect(resultBytes(runs[2]!)).toBe(resultBytes(qa));

    stub.reset();
    const warm = await runOk('qa_llm', ['--episodes', '60', '--workers', '4', '--split', 'test'], [atStub()], {
      cache: join(tmp, 'cache-qa-4'),
    });
    expect(stub.stats().requests).toBe(0);
    expect(metric(warm, 'llm_cache_hits')).toMatchObject({ mean: 1, count: 60 });
    expect(resultBytes(warm, ['llm_cache_hits'])).toBe(resultBytes(qa, ['llm_cache_hits']));

    const r = await execa(process.execPath, [CLI, 'rescore', qa.runId, '--scorer', 'exact', '--outputs', outputs, '--json'], {
      reject: false,
      env: { OPENAI_API_KEY: KEY },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(stub.stats().requests).toBe(0);
    const rescored = await report(qa);
    expect(rescored.scorers.map((s) => [s.scorer, s.rescored, s.count])).toEqual([
      ['numeric', false, 60],
      ['exact', true, 60],
    ]);
    expect(rescored.scorers[1]!.accuracy).toBe(0.8);
  });

  it('report.json of qa_llm: the wrong answers are the worst episodes, the right ones the best', async () => {
    const rep = await report(qa);
    expect(rep.scorers[0]).toMatchObject({ scorer: 'numeric', count: 60, correct: 48, accuracy: 0.8 });
    expect(rep.worst.length).toBeGreaterThan(0);
    expect(rep.best.length).toBeGreaterThan(0);
    for (const w of rep.worst) {
      expect(w.score).toBe(0);
      expect(qa.episodes[w.index]!.cluster).toBe('multi_step');
    }
    for (const b of rep.best) expect(b).toMatchObject({ score: 1, status: 'COMPLETED' });
    expect(rep.worst[0]).toMatchObject({ index: 4, episodeId: 'arith/test/test-004', answer: '80', target: 75 });
    expect(rep.perEpisode.find((c) => c.metric === 'llm_calls')).toMatchObject({ mean: 1, total: 60 });
  });

  it('react_llm: the calculator loop answers; at a budget of 2 calls every episode ends BUDGET_EXHAUSTED with partial usage', async () => {
    const cache = join(tmp, 'cache-react');
    stub.reset();
    const ok = await runOk('react_llm', ['--episodes', '5', '--workers', '2'], [atStub()], { cache });
    expect(ok.statusCounts).toEqual({ COMPLETED: 5 });
    expect(metric(ok, 'llm_calls')).toMatchObject({ mean: 3 });
    expect(metric(ok, 'correct')).toMatchObject({ mean: 0.8 });
    const events = await readEvents(outputs, ok.runId, 0);
    expect(events.map((e) => `${e.step}:${e.type}`)).toEqual(['0:llm_call', '0:tool_call', '1:llm_call', '1:tool_call', '2:llm_call']);
    expect(events[1]).toMatchObject({ name: 'calculator', arguments: '{"expression":"356 + 75"}', exit_code: 0 });
    expect(events[3]).toMatchObject({ name: 'calculator', arguments: '{"expression":"431 - 75"}' });
    expect(events[4]).toMatchObject({ response: { content: '431' } });

    const capped = await runOk('react_llm', ['--episodes', '5', '--workers', '2'], [atStub(), 'llm.max_llm_calls=2'], { cache });
    expect(capped.statusCounts).toEqual({ BUDGET_EXHAUSTED: 5 });
    for (const e of capped.episodes) {
      expect(e.error).toBe('the call budget of 2 model call(s) is spent');
      expect(e.metrics).toMatchObject({ llm_calls: 2, llm_retries: 0 });
      expect(e.metrics.prompt_tokens).toBeGreaterThan(0);
      expect(e.metrics.correct).toBeUndefined();
    }
    const rep = await report(capped);
    expect(rep.endings).toEqual([{ status: 'BUDGET_EXHAUSTED', count: 5, rate: 1 }]);
    // Every play ran out before answering: the scorer's line is still there, each play unanswered and wrong.
    expect(rep.scorers).toEqual([
      { scorer: 'score', rescored: false, count: 5, mean: 0, stderr: 0, correct: 0, accuracy: 0, unanswered: 5 },
    ]);
    expect(metric(capped, 'correct')).toMatchObject({ mean: 0, count: 5, imputed: { BUDGET_EXHAUSTED: 5 } });
  });

  it('react_llm with 30 % injected 429s: every episode completes and the retries are counted', async () => {
    stub.setOptions({ expectedKey: KEY, faultRate: 0.3, faultSeed: 7, faultKind: 429 });
    stub.reset();
    try {
      const s = await runOk(
        'react_llm',
        ['--episodes', '6', '--workers', '3'],
        [atStub(), 'llm.cache=false', 'llm.max_retries=10', 'llm.retry_base_ms=5'],
      );
      expect(s.statusCounts).toEqual({ COMPLETED: 6 });
      const faults = stub.stats().faults;
      expect(faults).toBeGreaterThan(0);
      expect(sum(s, 'llm_retries')).toBe(faults);
      const rep = await report(s);
      expect(rep.retried.retries).toBe(faults);
      expect(rep.infrastructureFailures).toEqual({ count: 0, rate: 0 });
    } finally {
      stub.setOptions({ expectedKey: KEY });
    }
  });

  it('react_llm against a dead endpoint: preflight fails the run at once naming the URL; without it every play is INFRA_ERROR and the run FAILED (exit 3)', async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as { port: number }).port;
    await new Promise<void>((r) => dead.close(() => r()));
    const url = `http://127.0.0.1:${port}/v1`;
    const sets = [`llm.base_url="${url}"`, 'llm.max_retries=1', 'llm.retry_base_ms=5'];
    const env = { EVAL_LLM_ENDPOINTS: url };
    const checked = await run('react_llm', ['--episodes', '4', '--workers', '2'], sets, { env });
    expect(checked.exitCode).toBe(1);
    expect(checked.summary).toMatchObject({ status: 'FAILED', episodesDone: 0, error: { code: 'PREFLIGHT_FAILED' } });
    expect(checked.summary!.error!.message).toBe(`connection refused at ${url} (GET ${url}/models, node "llm")`);
    expect(checked.stderr).toContain(`connection refused at ${url}`);

    const unchecked = await run('react_llm', ['--episodes', '4', '--workers', '2', '--no-preflight'], sets, { env });
    expect(unchecked.exitCode).toBe(3);
    const s = unchecked.summary!;
    expect(s.status).toBe('FAILED');
    expect(s.statusCounts).toEqual({ INFRA_ERROR: 4 });
    expect(s.error).toMatchObject({ code: 'INFRA_ERRORS' });
    expect(s.error!.message).toMatch(
      new RegExp(`^4 of 4 plays ended INFRA_ERROR; the first, play 0: .*${url.replaceAll('.', '\\.')}.*ECONNREFUSED`),
    );
    expect(metric(s, 'correct')).toBeUndefined();
    const rep = await report(s);
    expect(rep.error).toEqual(s.error);
    expect(rep.infrastructureFailures).toEqual({ count: 4, rate: 1 });
    expect(rep.failed).toBe(0);
    expect(rep.worst).toEqual([]);
    const text = await execa(process.execPath, [CLI, 'report', join(outputs, 'eval_runs', s.runId)], { reject: false });
    expect(text.stdout).toContain(`INFRA_ERRORS: ${s.error!.message}`);
  });

  it('some calls outlast their retries: accuracy is over the answered episodes, with their count', async () => {
    stub.setOptions({ expectedKey: KEY, faultRate: 0.5, faultSeed: 1, faultKind: 'reset' });
    stub.reset();
    try {
      // The circuit breaker off: which plays follow five resets in a row would depend on arrival order.
      const s = await runOk(
        'qa_llm',
        ['--episodes', '10', '--workers', '2'],
        [atStub(), 'llm.cache=false', 'llm.max_retries=0', 'llm.circuit_failures=0'],
      );
      // The default maxInfraErrorRate 0: any INFRA_ERROR play fails the run, whose numbers are kept all the same.
      expect(s.status).toBe('FAILED');
      expect(s.error?.code).toBe('INFRA_ERRORS');
      const infra = s.statusCounts.INFRA_ERROR ?? 0;
      const answered = s.statusCounts.COMPLETED ?? 0;
      expect(infra).toBeGreaterThan(0);
      expect(answered).toBeGreaterThan(0);
      expect(infra + answered).toBe(10);
      const rep = await report(s);
      expect(rep.infrastructureFailures).toEqual({ count: infra, rate: infra / 10 });
      const right = s.episodes.filter((e) => e.status === 'COMPLETED' && e.metrics.correct === true).length;
      expect(rep.scorers[0]).toMatchObject({ count: answered, correct: right, accuracy: right / answered });
      expect(metric(s, 'correct')).toMatchObject({ count: answered });
    } finally {
      stub.setOptions({ expectedKey: KEY });
    }
  });

  it('qa_llm_labels over sentiment: report.json has the per-class table and the confusion matrix', async () => {
    const s = await runOk('qa_llm_labels', ['--dataset', 'sentiment', '--episodes', '48', '--workers', '4'], [atStub()]);
    expect(s.statusCounts).toEqual({ COMPLETED: 48 });
    const rep = await report(s);
    const cls = rep.scorers[0]!.classification!;
    expect(cls.count).toBe(48);
    expect(cls.confusion.labels).toEqual(['negative', 'neutral', 'positive']);
    // The stand-in's word list misreads two positive reviews (one as negative, one as neutral).
    expect(cls.confusion.matrix).toEqual([
      [16, 0, 0],
      [0, 16, 0],
      [1, 1, 14],
    ]);
    expect(cls.perClass.find((c) => c.label === 'positive')).toMatchObject({ precision: 1, recall: 14 / 16, support: 16 });
    expect(rep.worst.map((w) => w.target)).toEqual(['positive', 'positive']);
  });

  it('a bad dataset line, an unknown scorer, a missing key variable (or model): one clear error each, before anything runs', async () => {
    const before = await runDirs();
    const bad = await run('qa_llm', ['--dataset', 'broken', '--episodes', '2'], [atStub()]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/datasets\/broken\/test\.jsonl:2: not valid JSON/);
    const fuzzy = await run('qa_fuzzy', ['--episodes', '2'], [atStub()]);
    expect(fuzzy.exitCode).toBe(2);
    expect(fuzzy.stderr).toMatch(/score__fuzzy/);
    const nokey = await run('qa_llm', ['--episodes', '2'], [atStub()], { env: { OPENAI_API_KEY: '' } });
    expect(nokey.exitCode).toBe(2);
    expect(nokey.stderr).toMatch(/node "llm" \(llm__chat\) reads its API key from OPENAI_API_KEY, which is not set/);
    const nomodel = await run('qa_llm', ['--episodes', '2'], [atStub()], { env: { OPENAI_MODEL: '' } });
    expect(nomodel.exitCode).toBe(2);
    expect(nomodel.stderr).toMatch(/node "llm" \(llm__chat\) names no model/);
    for (const r of [bad, fuzzy, nokey, nomodel]) expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(await runDirs()).toEqual(before);
  });

  it('the API key is nowhere in the outputs (grep -r of the whole folder: runs, logs, cache)', async () => {
    const grep = await execa('grep', ['-r', '-l', KEY, outputs], { reject: false });
    expect(grep.exitCode).toBe(1);
    expect(await filesContaining(outputs, KEY)).toEqual([]);
  });
});
