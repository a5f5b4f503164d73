/**
 * A model-backed run on the dashboard: the run page's report (accuracy over the scored
 * episodes, infrastructure failures apart, per-class table, confusion matrix, top failures
 * and successes linking to their episodes, endings, cost per episode) and the episode
 * drawer's conversation (messages, the model's tool call, the tool's result, the final answer,
 * tokens, latency, cached and retry marks). The run directory is written by the test: a
 * label-scored run's spec and summary.json and an episode's events.jsonl, as an eval process
 * leaves them; the report is made from them as for any finished run. A last test shows the
 * report of a real `evalctl run` of qa_llm_labels over the sentiment dataset against the
 * stand-in server.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_GRAPHS_DIR, DIST_DIR } from '../../src/paths.js';
import { episodeDir, FILES, runsRoot } from '../../src/store/run-dir.js';
import { runSpecSchema } from '../../src/spec/run-spec.js';
import { rescoreRun } from '../../src/store/rescore-run.js';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub.js';
import { expectAccessible } from './axe.js';
import { type Session, sessionPerTest } from './harness.js';

const RUN_ID = '20260102_090000';

const calc = { id: 'call_1', type: 'function', function: { name: 'calculator', arguments: '{"expression":"(17 + 25) * 3"}' } };

/** Episode 1's history: a model call that asks for the calculator, the tool call, a retried model call that answers. */
const EVENTS = [
  {
    type: 'llm_call',
    step: 0,
    nodeId: 'llm',
    model: 'stand-in-model',
    call: 1,
    messages: [
      { role: 'system', content: 'Solve the arithmetic word problem.' },
      { role: 'user', content: 'Ana has 17 boxes of 3 pens and 25 more boxes. How many pens?' },
    ],
    response: { role: 'assistant', content: null, tool_calls: [calc] },
    tool_calls: [calc],
    finish_reason: 'tool_calls',
    usage: { prompt_tokens: 120, completion_tokens: 18 },
    latency_ms: 210,
    cached: true,
    retries: 0,
  },
  {
    type: 'tool_call',
    step: 0,
    nodeId: 'tools',
    tool_call_id: 'call_1',
    name: 'calculator',
    arguments: '{"expression":"(17 + 25) * 3"}',
    exit_code: 0,
    stdout: '126',
    stderr: '',
    duration_ms: 41,
    timed_out: false,
  },
  { type: 'infra', kind: 'retry', step: 1, nodeId: 'llm', attempt: 1, status: 429, error: 'rate limited', delay_ms: 500 },
  {
    type: 'llm_call',
    step: 1,
    nodeId: 'llm',
    model: 'stand-in-model',
    call: 2,
    prior_messages: 3,
    messages: [{ role: 'tool', tool_call_id: 'call_1', content: '126' }],
    response: { role: 'assistant', content: '126' },
    finish_reason: 'stop',
    usage: { prompt_tokens: 150, completion_tokens: 3 },
    latency_ms: 190,
    cached: false,
    retries: 1,
  },
];

/** Sentiment labels: what each episode's sample expects and what the model answered (episode 5 never got an answer). */
const TARGETS = ['negative', 'positive', 'positive', 'negative', 'positive'];
const ANSWERS = ['negative', 'positive', 'maybe', 'positive', 'positive'];
const REVIEWS = ['Dull.', 'A delight from start to finish.', 'It was fine, I guess.', 'Never again.', 'Loved it.', 'Superb.'];

/** What the run's llm node asked, as frozen at submit. */
const MODEL = {
  node: 'llm',
  type: 'llm__chat',
  model: 'stand-in-model',
  baseUrl: 'http://127.0.0.1:9/v1',
  sampling: { temperature: 0, max_tokens: 64 },
};

/** A finished label-scored run of 6 episodes: 5 scored by `exact`, one infrastructure failure. */
async function writeLabelRun(outputsDir: string): Promise<string> {
  const dir = join(runsRoot(outputsDir), RUN_ID);
  await mkdir(join(dir, FILES.episodes), { recursive: true });
  const t0 = Date.parse('2026-01-02T09:00:00.000Z');
  const episodes = [0, 1, 2, 3, 4, 5].map((i) => {
    const infra = i === 5;
    const value = infra ? 0 : ANSWERS[i] === TARGETS[i] ? 1 : 0;
    const startedAt = new Date(t0 + i * 1000).toISOString();
    return {
      index: i,
      episodeId: `sentiment/test/s${i}`,
      status: infra ? 'INFRA_ERROR' : 'COMPLETED',
      steps: infra ? 0 : 1,
      metrics: infra ? {} : { score: value, correct: value === 1, llm_calls: 1, prompt_tokens: 100 + 10 * i, completion_tokens: 2 },
      seed: i,
      workerId: i % 2,
      durationMs: 500 + 10 * i,
      startedAt,
      finishedAt: new Date(t0 + i * 1000 + 500 + 10 * i).toISOString(),
      stepBudget: 10,
      assets: [],
      instruction: REVIEWS[i],
      sampleId: `s${i}`,
      ...(infra
        ? { error: 'the endpoint did not answer after 4 retries' }
        : {
            scores: [
              {
                scorer: 'exact',
                value,
                answer: ANSWERS[i],
                extracted: ANSWERS[i],
                target: TARGETS[i],
                explanation: value ? 'matches' : `expected ${TARGETS[i]}`,
              },
            ],
          }),
    };
  });
  const scored = episodes.slice(0, 5);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const agg = (name: string, xs: number[]) => {
    const m = mean(xs);
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
    return { name, mean: m, count: xs.length, stderr: sd / Math.sqrt(xs.length), min: Math.min(...xs), max: Math.max(...xs) };
  };
  const createdAt = new Date(t0 - 1000).toISOString();
  const finishedAt = new Date(t0 + 6000).toISOString();
  // A run its server let offer python (`--allow-code-tools`): its page says so.
  const spec = runSpecSchema.parse({
    runId: RUN_ID,
    graphName: 'qa_llm',
    episodeCount: 6,
    workerCount: 2,
    maxInFlight: 64,
    graph: JSON.parse(await readFile(join(BUILTIN_GRAPHS_DIR, 'qa_llm.json'), 'utf8')),
    createdAt,
    codeTools: ['tools.python'],
    models: [MODEL],
  });
  const manifest = {
    version: 1,
    project: { name: 'batch-eval', version: '0.1.0' },
    graphSha256: '0'.repeat(64),
    nodesets: [],
    runtime: { node: process.versions.node, platform: process.platform, arch: process.arch },
    models: [MODEL],
    reportedModels: [{ node: 'llm', model: 'stand-in-model-0601', systemFingerprint: 'fp_e2e', calls: 5 }],
  };
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
  const summary = {
    seq: 7,
    runId: RUN_ID,
    status: 'COMPLETED',
    graphName: 'qa_llm',
    episodeCount: 6,
    workerCount: 2,
    seed: 0,
    priority: 0,
    episodesDone: 6,
    createdAt,
    startedAt: new Date(t0).toISOString(),
    finishedAt,
    error: null,
    aggregateMetrics: [
      agg(
        'score',
        scored.map((e) => e.metrics.score as number),
      ),
      agg(
        'prompt_tokens',
        scored.map((e) => e.metrics.prompt_tokens as number),
      ),
    ],
    aggregateByTask: {},
    statusCounts: { COMPLETED: 5, INFRA_ERROR: 1 },
    timedOut: false,
    episodes,
  };
  await writeFile(join(dir, FILES.spec), JSON.stringify(spec, null, 2));
  await writeFile(join(dir, FILES.summary), JSON.stringify(summary));
  await writeFile(join(dir, FILES.done), `${finishedAt}\n`);
  return dir;
}

const sessions = sessionPerTest();

function openWithRun(opts: { rescore?: string } = {}): Promise<Session> {
  return sessions.open({
    prepare: async (out) => {
      const runDir = await writeLabelRun(out);
      if (opts.rescore) await rescoreRun({ runDir, scorer: opts.rescore });
      const ep = episodeDir(runDir, 1);
      await mkdir(ep, { recursive: true });
      await writeFile(join(ep, 'events.jsonl'), `${EVENTS.map((e) => JSON.stringify(e)).join('\n')}\n`);
    },
  });
}

describe('a model-backed run on the dashboard', { timeout: 60_000 }, () => {
  it('shows the report: accuracy with infrastructure failures apart, the confusion matrix, and links to the extremes', async () => {
    const s = await openWithRun();
    const { page, url } = s;
    await page.goto(`${url}#/runs/${RUN_ID}`);
    await page.waitForSelector('[data-testid=run-report]');
    expect(await page.textContent('[data-testid=code-tools]')).toMatch(/code-running tools \(tools\.python\)/);
    expect(await page.textContent('[data-testid=report-accuracy]')).toMatch(/exact accuracy 60 % over 5 counted episodes/);
    expect(await page.textContent('[data-testid=report-infra]')).toMatch(/infrastructure failures 1 \(16\.7 %\)/);

    const matrix = await page.$$eval('[data-testid=confusion-matrix] tbody tr', (rows) =>
      rows.map((r) => Array.from(r.children).map((c) => c.textContent?.trim())),
    );
    expect(matrix).toEqual([
      ['negative', '1', '1', '0'],
      ['positive', '0', '2', '1'],
    ]);
    expect(await page.$$eval('[data-testid=confusion-matrix] thead th', (hs) => hs.map((h) => h.textContent?.trim()))).toEqual([
      '',
      'negative',
      'positive',
      '(other)',
    ]);
    expect(await page.$$eval('[data-testid=report-per-class] tbody th', (hs) => hs.map((h) => h.textContent))).toEqual([
      'negative',
      'positive',
    ]);
    expect(await page.$$eval('[data-testid=report-metrics] tbody th', (hs) => hs.map((h) => h.textContent))).toEqual([
      'score',
      'prompt_tokens',
    ]);
    expect(await page.$$eval('[data-testid=report-endings] th', (hs) => hs.map((h) => h.textContent))).toEqual([
      'completed',
      'infra error',
    ]);
    // Per episode over the episodes that report it: prompt tokens 100 … 140, mean 120.
    expect(await page.textContent('[data-testid=report-costs]')).toMatch(/prompt_tokens\s*120\s*600/);
    expect(await page.$$eval('[data-testid=report-worst] tbody a', (as) => as.map((a) => a.textContent))).toEqual(['2', '3']);
    expect(await page.$$eval('[data-testid=report-best] tbody a', (as) => as.map((a) => a.textContent))).toEqual(['0', '1', '4']);
    // The model asked beside what the provider said answered.
    expect(await page.$$eval('[data-testid=run-models] tbody td', (tds) => tds.map((td) => td.textContent))).toEqual([
      'llm',
      'stand-in-model',
      'http://127.0.0.1:9/v1',
      'temperature=0, max_tokens=64',
      'stand-in-model-0601 (fp_e2e) ×5',
    ]);
    // What bounded the run: it asked for 64 in flight and had 6 plays.
    expect(await page.textContent('[data-testid=run-concurrency]')).toMatch(/6 episodes in flight on 2 workers \(up to 3 each\)/);
    expect(await page.getAttribute('[data-testid=concurrency-limit]', 'title')).toBe('the run has 6 play(s)');
    await expectAccessible(page, 'the run page with its report');
    await s.screenshot('llm-run-report');

    // The worst episode's link opens it in the drawer.
    await page.click('[data-testid=report-worst] a[href$="/episodes/2"]');
    await page.waitForSelector('[data-testid=episode-drawer][aria-label="episode 2"] .ep-summary');
    expect(await page.evaluate(() => location.hash)).toBe(`#/runs/${RUN_ID}/episodes/2`);

    // The runs list's model column: the model asked, and the one that answered when the provider named another.
    await page.goto(`${url}#/runs`);
    await page.waitForSelector('[data-testid=run-model]');
    expect(await page.textContent('[data-testid=run-model]')).toBe('stand-in-model → stand-in-model-0601');
  });

  it("shows an episode's event history as a conversation with its tool call, tokens, latency, cache and retry marks", async () => {
    const s = await openWithRun();
    const { page, url } = s;
    await page.goto(`${url}#/runs/${RUN_ID}/episodes/1`);
    await page.waitForSelector('[data-testid=conversation] .chat-msg');
    const roles = await page.$$eval('[data-testid=conversation] .chat > li', (lis) =>
      lis.map((li) => li.getAttribute('data-role') ?? li.getAttribute('data-testid')),
    );
    // The tool result is shown once, from the tool node's event, not again as the next call's input.
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'chat-notice', 'assistant']);
    expect(await page.textContent('[data-testid=tool-call-request]')).toContain('calculator');
    expect(await page.textContent('[data-testid=tool-call-request]')).toContain('(17 + 25) * 3');
    expect(await page.textContent('[data-testid=tool-result] pre')).toBe('126');
    expect(await page.textContent('[data-testid=chat-notice]')).toMatch(/retry 1 after 429 rate limited \(waited 500 ms\)/);
    expect(await page.$$eval('[data-testid=badge-cached]', (b) => b.length)).toBe(1);
    expect(await page.textContent('[data-testid=badge-retries]')).toBe('1 retry');
    const head = await page.textContent('[data-testid=conversation] h3');
    expect(head).toMatch(/2 model calls · 270 → 21 tokens · 400 ms · 1 tool call · 1 cached · 1 retry/);
    const last = page.locator('[data-testid=conversation] .chat-assistant').last();
    expect(await last.locator('.chat-text').textContent()).toBe('126');
    await expectAccessible(page, 'the episode drawer with a conversation');
    await s.screenshot('llm-episode-conversation');

    // An episode without events has no conversation section.
    await page.goto(`${url}#/runs/${RUN_ID}/episodes/2`);
    await page.waitForSelector('[data-testid=episode-drawer][aria-label="episode 2"] .ep-summary');
    // The events are asked for once the record is shown: wait for that answer.
    await page.waitForSelector('[data-testid=conversation-loading]', { state: 'detached' });
    expect(await page.$('[data-testid=conversation]')).toBeNull();
  });

  it("shows a rescored episode's sample: input, target, answer, both scores labelled, then the conversation", async () => {
    const s = await openWithRun({ rescore: 'includes' });
    const { page, url } = s;
    await page.goto(`${url}#/runs/${RUN_ID}/episodes/1`);
    await page.waitForSelector('[data-testid=sample-view]');
    expect(await page.textContent('[data-testid=sample-input]')).toBe('A delight from start to finish.');
    expect(await page.textContent('[data-testid=sample-target]')).toBe('positive');
    expect(await page.textContent('[data-testid=sample-answer]')).toBe('positive');
    const rows = await page.$$eval('[data-testid=sample-scores] tbody tr', (trs) =>
      trs.map((tr) => Array.from(tr.children).map((c) => c.textContent?.trim())),
    );
    expect(rows).toEqual([
      ['exact', '1', 'matches'],
      ['includes rescored', '1', 'the answer contains target "positive"'],
    ]);
    // The sample comes before the transcript.
    await page.waitForSelector('[data-testid=conversation]');
    const order = await page.$$eval('[data-testid=sample-view], [data-testid=conversation]', (els) =>
      els.map((e) => e.getAttribute('data-testid')),
    );
    expect(order).toEqual(['sample-view', 'conversation']);
    await expectAccessible(page, 'the episode drawer with a rescored sample');
    await s.screenshot('llm-episode-sample');
  });
});

describe('the report of a real label run on the dashboard', { timeout: 90_000 }, () => {
  let stub: OpenAIStub;
  beforeAll(async () => {
    stub = await startOpenAIStub();
  });
  afterAll(async () => {
    await stub.close();
  });

  it('qa_llm_labels over sentiment: accuracy, the confusion matrix and the misread reviews as top failures', async () => {
    let runId = '';
    const s = await sessions.open({
      prepare: async (out) => {
        const r = await execa(
          process.execPath,
          [
            join(DIST_DIR, 'main.js'),
            'run',
            'qa_llm_labels',
            '--dataset',
            'sentiment',
            '--episodes',
            '24',
            '--workers',
            '4',
            '--outputs',
            out,
            '--json',
          ],
          {
            env: { OPENAI_MODEL: 'stand-in-model', OPENAI_BASE_URL: stub.baseURL, OPENAI_API_KEY: 'none', EVAL_LLM_CACHE_DIR: '' },
            reject: false,
          },
        );
        if (!r.stdout.startsWith('{')) throw new Error(`evalctl run failed (${r.exitCode}): ${r.stderr}`);
        runId = (JSON.parse(r.stdout) as { runId: string }).runId;
      },
    });
    const { page, url } = s;
    await page.goto(`${url}#/runs/${runId}`);
    await page.waitForSelector('[data-testid=run-report]');
    // The stand-in's word list misreads two positive reviews (episodes 0 and 18): 22 of 24.
    expect(await page.textContent('[data-testid=report-accuracy]')).toMatch(/exact accuracy 91\.7 % over 24 counted episodes/);
    const matrix = await page.$$eval('[data-testid=confusion-matrix] tbody tr', (rows) =>
      rows.map((r) => Array.from(r.children).map((c) => c.textContent?.trim())),
    );
    expect(matrix).toEqual([
      ['negative', '8', '0', '0'],
      ['neutral', '0', '8', '0'],
      ['positive', '1', '1', '6'],
    ]);
    expect(await page.$$eval('[data-testid=report-worst] tbody a', (as) => as.map((a) => a.textContent))).toEqual(['0', '18']);
    expect(await page.$$eval('[data-testid=report-best] tbody a', (as) => as.length)).toBeGreaterThan(0);
  });
});
