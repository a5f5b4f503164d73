/**
 * Runs traced over OTLP/HTTP to a collector the test starts: the server's run span, the eval
 * process's episode spans under it and their step spans under them, in one trace; `evalctl run`
 * traces on its own; with no endpoint nothing is sent.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import { readSummary, runDirPath } from '../../src/store/run-dir.js';
import type { EpisodeRecord, RunSummary } from '../../src/store/types.js';
import { gql, START_EVAL, urlFrom, waitFor } from '../app.helpers.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.js';

const MAIN = join(DIST_DIR, 'main.js');
/** No tracing variable of the test's own environment leaks into the processes under test. */
const NO_OTEL = {
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_HEADERS: '',
  OTEL_SDK_DISABLED: '',
  OTEL_TRACES_EXPORTER: '',
  TRACEPARENT: '',
  EVAL_API_TOKEN: '',
  ACTIVE_WORKSPACE_DIR: '',
};

let dir: string;
let receiver: OtlpReceiver;
let child: ResultPromise | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'traces-'));
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await child?.catch(() => {});
  child = undefined;
  await receiver.close();
  await rm(dir, { recursive: true, force: true });
});

const named = (name: string) => receiver.spans.filter((s) => s.name === name);

/** Episode spans under `run`, step spans under each episode, one per step, all in the run's trace. */
function expectEpisodeTree(run: ReceivedSpan, records: EpisodeRecord[]): void {
  const episodes = named('episode');
  expect(episodes).toHaveLength(records.length);
  for (const e of episodes) {
    expect(e.traceId).toBe(run.traceId);
    expect(e.parentSpanId).toBe(run.spanId);
  }
  for (const r of records) {
    const e = episodes.find((s) => s.attributes['batch_eval.episode.index'] === r.index)!;
    // The record links to its span.
    expect({ traceId: r.traceId, spanId: r.spanId }).toEqual({ traceId: e.traceId, spanId: e.spanId });
    expect(e.attributes).toMatchObject({
      'batch_eval.run.id': run.attributes['batch_eval.run.id'],
      'batch_eval.episode.seed': r.seed,
      'batch_eval.episode.status': r.status,
      'batch_eval.episode.steps': r.steps,
      'batch_eval.worker.id': r.workerId,
      'batch_eval.episode.id': r.episodeId,
    });
    for (const [k, v] of Object.entries(r.metrics)) expect(e.attributes[`batch_eval.metric.${k}`]).toBe(v);
    const steps = receiver.spans.filter((s) => s.name === 'step' && s.parentSpanId === e.spanId);
    expect(steps.map((s) => s.attributes['batch_eval.step']).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: r.steps }, (_, i) => i),
    );
    for (const s of steps) {
      expect(s.traceId).toBe(run.traceId);
      expect(s.startNs >= e.startNs && s.endNs <= e.endNs).toBe(true);
      expect(s.events.map((ev) => ev.attributes['batch_eval.node.id'])).toContain('env');
    }
  }
  expect(named('step').length).toBe(records.reduce((n, r) => n + r.steps, 0));
  expect(named('step').length).toBeGreaterThan(records.length);
  // Every step span is some episode's child.
  expect(named('step').every((s) => episodes.some((e) => e.spanId === s.parentSpanId))).toBe(true);
}

describe('run tracing over OTLP/HTTP', () => {
  it('a 5-episode run through the server: one run span, 5 episode spans under it, their steps under them, one trace', async () => {
    const outputs = join(dir, 'outputs');
    child = execa('node', [MAIN, 'serve', '--port', '0', '--outputs', outputs], {
      reject: false,
      forceKillAfterDelay: false,
      env: { ...NO_OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=k-123' },
    });
    const url = await urlFrom(child);
    const started = await gql(url, START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 5, workerCount: 2, seed: 4 } });
    const runId = started.data!.startEval.runId as string;
    const runDir = runDirPath(outputs, runId);
    await waitFor('the run to complete', async () => (await readSummary(runDir).catch(() => null))?.status === 'COMPLETED', 60_000);
    // A graceful stop exports what the server still buffers; the eval process flushed before it exited.
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(String(result.stdout)).toContain(`tracing runs to ${receiver.url}/v1/traces`);

    const runs = named('run');
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run.parentSpanId).toBe('');
    expect(run.resource['batch_eval.process']).toBe('server');
    expect(run.attributes).toMatchObject({
      'batch_eval.run.id': runId,
      'batch_eval.run.graph': 'gridnav_planner',
      'batch_eval.run.episode_count': 5,
      'batch_eval.run.status': 'COMPLETED',
    });
    const summary = (await readSummary(runDir)) as RunSummary;
    expectEpisodeTree(run, summary.episodes);
    expect(named('episode').every((e) => e.resource['batch_eval.process'] === 'eval')).toBe(true);
    const hosts = named('hosts.start');
    expect(hosts).toHaveLength(1);
    expect(hosts[0]!.parentSpanId).toBe(run.spanId);
    // OTEL_EXPORTER_OTLP_HEADERS reached the collector from both processes.
    expect(receiver.requests.length).toBeGreaterThanOrEqual(2);
    expect(receiver.requests.every((r) => r.headers['x-collector-key'] === 'k-123')).toBe(true);
  });

  it('a run the server runs in its own process (viaSubprocess: false) gets the same tree', async () => {
    const outputs = join(dir, 'outputs');
    child = execa('node', [MAIN, 'serve', '--port', '0', '--outputs', outputs], {
      reject: false,
      forceKillAfterDelay: false,
      env: { ...NO_OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    const url = await urlFrom(child);
    const started = await gql(url, START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 2, viaSubprocess: false } });
    expect(started.data!.startEval.viaSubprocess).toBe(false);
    const runDir = runDirPath(outputs, started.data!.startEval.runId as string);
    await waitFor('the run to complete', async () => (await readSummary(runDir).catch(() => null))?.status === 'COMPLETED', 60_000);
    child.kill('SIGTERM');
    expect((await child).exitCode).toBe(0);
    const runs = named('run');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.attributes['batch_eval.run.status']).toBe('COMPLETED');
    expectEpisodeTree(runs[0]!, (await readSummary(runDir)).episodes);
    expect(named('episode').every((e) => e.resource['batch_eval.process'] === 'server')).toBe(true);
  });

  it('a run cancelled as the server stops on SIGTERM still exports its run span and the episodes it ran', async () => {
    const outputs = join(dir, 'outputs');
    child = execa('node', [MAIN, 'serve', '--port', '0', '--outputs', outputs, '--cancel-running-on-exit'], {
      reject: false,
      forceKillAfterDelay: false,
      env: { ...NO_OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    const url = await urlFrom(child);
    const started = await gql(url, START_EVAL, {
      input: { graphName: 'gridnav_planner', episodeCount: 20, workerCount: 1, overrides: { env: { step_latency_ms: 20 } } },
    });
    const runDir = runDirPath(outputs, started.data!.startEval.runId as string);
    await waitFor('an episode to finish', async () => ((await readSummary(runDir).catch(() => null))?.episodesDone ?? 0) >= 1, 60_000);
    child.kill('SIGTERM');
    expect((await child).exitCode).toBe(0);
    const summary = await readSummary(runDir);
    expect(summary.status).toBe('CANCELLED');
    const run = named('run')[0]!;
    expect(run.attributes['batch_eval.run.status']).toBe('CANCELLED');
    const episodes = named('episode');
    expect(episodes.length).toBe(summary.episodes.length);
    expect(episodes.every((e) => e.parentSpanId === run.spanId && e.traceId === run.traceId)).toBe(true);
    expect(episodes.some((e) => e.attributes['batch_eval.episode.status'] === 'CANCELLED')).toBe(true);
  });

  it('evalctl run traces its run on its own: a root run span from the eval process', async () => {
    const outputs = join(dir, 'out');
    const r = await execa(
      process.execPath,
      [MAIN, 'run', 'gridnav_planner', '--episodes', '2', '--workers', '1', '--outputs', outputs, '--json'],
      { reject: false, env: { ...NO_OTEL, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces` } },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as RunSummary;
    const runs = named('run');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.parentSpanId).toBe('');
    expect(runs[0]!.resource['batch_eval.process']).toBe('eval');
    expect(runs[0]!.attributes['batch_eval.run.status']).toBe('COMPLETED');
    expectEpisodeTree(runs[0]!, summary.episodes);
    const log = await readFile(join(outputs, 'eval_runs', summary.runId, 'stdout.log'), 'utf8');
    expect(log).toContain('tracing to');
  });

  it('with no endpoint set nothing is sent and nothing is said about tracing', async () => {
    const outputs = join(dir, 'out');
    const r = await execa(process.execPath, [MAIN, 'run', 'gridnav_planner', '--episodes', '2', '--outputs', outputs, '--json'], {
      reject: false,
      env: NO_OTEL,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const summary = JSON.parse(r.stdout) as RunSummary;
    expect(summary.status).toBe('COMPLETED');
    const runDir = join(outputs, 'eval_runs', summary.runId);
    const logs = (await readFile(join(runDir, 'stdout.log'), 'utf8')) + (await readFile(join(runDir, 'stderr.log'), 'utf8'));
    expect(logs).not.toMatch(/tracing/);
    expect(receiver.requests).toHaveLength(0);
  });
});
