/**
 * Run exports over HTTP (token-protected) and from `evalctl export`: CSV, JSONL, the summary
 * and the tar.gz of the run directory, against records written as the eval process writes them.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvField, csvRow } from '../../src/export/csv-field.js';
import { headerOf, rowOf } from '../../src/export/episode-columns.js';
import { SAMPLE_TEXT_CHARS } from '../../src/export/sample-columns.js';
import { DIST_DIR } from '../../src/paths.js';
import { runsRoot, writeSummary } from '../../src/store/run-dir.js';
import { startServer, type TestServer } from '../app.helpers.js';

const TOKEN = 'export-token';
const RUN_ID = '20260101_120000';
const LONG_ASSET = `${'a'.repeat(150)}.txt`;
const CLI = join(DIST_DIR, 'main.js');

/** Episode records as the writer leaves them, with the awkward cases: quotes, commas, newlines, a string and a boolean metric, an extra field. */
function recordOf(i: number): Record<string, unknown> {
  return {
    index: i,
    episodeId: `mini/val/${i}`,
    status: i === 2 ? 'ERROR' : 'COMPLETED',
    steps: 3 + i,
    metrics: {
      success: i % 2,
      spl: i / 7,
      ...(i === 1 ? { note: 'a "quoted", text\nover lines' } : {}),
      ...(i === 3 ? { solved: true } : {}),
    },
    seed: 1000 + i,
    workerId: i % 2,
    durationMs: 10.5 + i,
    startedAt: '2026-01-01T12:00:00.000Z',
    finishedAt: '2026-01-01T12:00:01.000Z',
    task: i < 2 ? 'small' : 'large, hard',
    stepBudget: 50,
    assets: [],
    traceId: `trace-${i}`,
    ...(i === 2 ? { error: 'node "agent" failed:\r\nboom' } : {}),
  };
}

let server: TestServer;
let runDir: string;
let records: Array<Record<string, unknown>>;

beforeAll(async () => {
  server = await startServer({ token: TOKEN });
  runDir = join(runsRoot(join(server.dir, 'outputs')), RUN_ID);
  records = [0, 1, 2, 3].map(recordOf);
  for (const r of records) {
    const ep = join(runDir, 'episodes', `ep${String(r.index).padStart(4, '0')}`);
    await mkdir(join(ep, 'assets'), { recursive: true });
    await writeFile(join(ep, 'episode.json'), JSON.stringify(r, null, 2));
    await writeFile(join(ep, 'log.jsonl'), '{"step":0}\n');
  }
  await writeFile(join(runDir, 'episodes', 'ep0001', 'assets', LONG_ASSET), 'long name\n');
  await writeFile(join(runDir, 'episodes', 'ep0001', 'assets', 'empty.txt'), '');
  const summary = {
    seq: 5,
    runId: RUN_ID,
    status: 'COMPLETED',
    graphName: 'g',
    episodeCount: 4,
    workerCount: 2,
    seed: 0,
    priority: 0,
    episodesDone: 4,
    createdAt: '2026-01-01T11:59:59.000Z',
    startedAt: '2026-01-01T12:00:00.000Z',
    finishedAt: '2026-01-01T12:00:05.000Z',
    error: null,
    aggregateMetrics: [],
    aggregateByTask: {},
    statusCounts: { COMPLETED: 3, ERROR: 1 },
    timedOut: false,
    episodes: records,
  };
  await writeFile(join(runDir, 'summary.json'), JSON.stringify(summary));
  await writeFile(join(runDir, 'spec.json'), '{"runId":"x"}');
});
afterAll(async () => {
  await server?.stop();
});

const get = (path: string, token: string | null = TOKEN) =>
  fetch(server.url + path, token ? { headers: { authorization: `Bearer ${token}` } } : {});

describe('run exports', { timeout: 30_000 }, () => {
  it('CSV: the documented columns, metrics sorted as metric.<name>, RFC 4180 quoting that csv-parse reads back', async () => {
    const res = await get(`/runs/${RUN_ID}/export.csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${RUN_ID}.csv"`);
    const text = await res.text();
    const rows = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(rows[0]!)).toEqual([
      'index',
      'episodeId',
      'repeat',
      'status',
      'steps',
      'seed',
      'stepBudget',
      'task',
      'sampleId',
      'cluster',
      'scene',
      'instruction',
      'input',
      'target',
      'answer',
      'extracted',
      'error',
      'droppedMetrics',
      'metric.note',
      'metric.solved',
      'metric.spl',
      'metric.success',
      'workerId',
      'durationMs',
      'startedAt',
      'finishedAt',
    ]);
    expect(rows.map((r) => r.index)).toEqual(['0', '1', '2', '3']);
    expect(rows[1]!['metric.note']).toBe('a "quoted", text\nover lines');
    expect(rows[2]!.error).toBe('node "agent" failed:\r\nboom');
    expect(rows[2]!.task).toBe('large, hard');
    expect(rows[3]!['metric.solved']).toBe('true');
    expect(rows[0]!['metric.note']).toBe('');
    expect(rows.map((r) => Number(r['metric.spl']))).toEqual(records.map((r) => (r.metrics as { spl: number }).spl));
    expect(rows[3]!.durationMs).toBe('13.5');
    expect(text.split('\r\n')[0]).toMatch(/^index,episodeId,/);
    expect(csvField(' padded')).toBe('" padded"');
  });

  it('JSONL: each record as its episode.json holds it, unknown fields kept, in index order', async () => {
    const text = await (await get(`/runs/${RUN_ID}/export.jsonl`)).text();
    expect(text.endsWith('\n')).toBe(true);
    expect(
      text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(records);
  });

  it('JSON: summary.json as the run wrote it', async () => {
    const res = await get(`/runs/${RUN_ID}/export.json`);
    expect(JSON.parse(await res.text())).toEqual(JSON.parse(await readFile(join(runDir, 'summary.json'), 'utf8')));
  });

  it('JSON of a run whose records are in records.jsonl: summary.json with its records, in index order, as one document', async () => {
    const dir = join(runsRoot(join(server.dir, 'outputs')), '20260101_120001');
    await mkdir(dir, { recursive: true });
    const full = JSON.parse(await readFile(join(runDir, 'summary.json'), 'utf8'));
    await writeSummary(dir, { ...full, runId: '20260101_120001', episodes: [...full.episodes].reverse() });
    const res = await get('/runs/20260101_120001/export.json');
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ ...full, runId: '20260101_120001' });
    expect(text).toBe(`${JSON.stringify({ ...full, runId: '20260101_120001' }, null, 2)}\n`);
  });

  it('tar.gz: the run directory, byte for byte, long names included, as system tar extracts it', async () => {
    const res = await get(`/runs/${RUN_ID}/export.tar.gz`);
    expect(res.headers.get('content-type')).toBe('application/gzip');
    const out = await mkdtemp(join(tmpdir(), 'export-tar-'));
    try {
      await writeFile(join(out, 'run.tar.gz'), Buffer.from(await res.arrayBuffer()));
      const listing = await execa('tar', ['-tzf', join(out, 'run.tar.gz')]);
      expect(listing.stdout.split('\n')).toContain(`${RUN_ID}/episodes/ep0001/assets/${LONG_ASSET}`);
      await execa('tar', ['-xzf', join(out, 'run.tar.gz'), '-C', out]);
      const diff = await execa('diff', ['-r', runDir, join(out, RUN_ID)], { reject: false });
      expect(diff.stdout).toBe('');
      expect(diff.exitCode).toBe(0);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('needs the token (header or access_token), refuses bad ids and unknown runs', async () => {
    expect((await get(`/runs/${RUN_ID}/export.csv`, null)).status).toBe(401);
    expect((await get(`/runs/${RUN_ID}/export.csv`, 'wrong')).status).toBe(401);
    expect((await fetch(`${server.url}/runs/${RUN_ID}/export.jsonl?access_token=${TOKEN}`)).status).toBe(200);
    expect((await get('/runs/not-a-run/export.csv')).status).toBe(400);
    const missing = await get('/runs/20990101_000000/export.csv');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe('NOT_FOUND');
    expect(
      (await fetch(`${server.url}/runs/${RUN_ID}/export.csv`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(405);
  });

  it('evalctl export writes the same bytes as the server, to stdout or -o FILE', async () => {
    const outputs = join(server.dir, 'outputs');
    const viaHttp = await (await get(`/runs/${RUN_ID}/export.csv`)).text();
    const stdout = await execa(process.execPath, [CLI, 'export', RUN_ID, '--format', 'csv', '--outputs', outputs], {
      stripFinalNewline: false,
    });
    expect(stdout.stdout).toBe(viaHttp);
    const file = join(server.dir, 'eps.jsonl');
    await execa(process.execPath, [CLI, 'export', RUN_ID, '--format', 'jsonl', '--outputs', outputs, '-o', file]);
    expect(await readFile(file, 'utf8')).toBe(await (await get(`/runs/${RUN_ID}/export.jsonl`)).text());
    const bad = await execa(process.execPath, [CLI, 'export', RUN_ID, '--format', 'xml', '--outputs', outputs], { reject: false });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--format must be one of csv, jsonl, json, tar/);
    const unknown = await execa(process.execPath, [CLI, 'export', '20990101_000000', '--outputs', outputs], { reject: false });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(/not found/);
    // The run's directory, as `evalctl run` prints it, names the same run.
    const byDir = await execa(process.execPath, [CLI, 'export', join(outputs, 'eval_runs', RUN_ID), '--format', 'csv'], {
      stripFinalNewline: false,
    });
    expect(byDir.stdout).toBe(viaHttp);
    const noDir = await execa(process.execPath, [CLI, 'export', join(server.dir, 'nowhere')], { reject: false });
    expect(noDir.exitCode).toBe(2);
    expect(noDir.stderr).toContain(`run directory ${join(server.dir, 'nowhere')} not found`);
  });
});

describe('CSV rows of a run with repeats', () => {
  it('say which play of its episode each row is', () => {
    const { header, metrics } = headerOf(['success']);
    const play = { index: 5, episodeId: 'e/2', repeat: 1, status: 'COMPLETED', steps: 3, metrics: { success: 1 } };
    const row = rowOf(play as unknown as Parameters<typeof rowOf>[0], metrics);
    expect(row[header.indexOf('repeat')]).toBe('1');
    expect(rowOf({ ...play, repeat: undefined } as unknown as Parameters<typeof rowOf>[0], metrics)[header.indexOf('repeat')]).toBe('');
  });
});

describe('CSV rows of an episode with a NaN or ±Infinity metric', () => {
  it('name each such metric and its value, while the metric’s own cell stays empty like the record’s', () => {
    const { header, metrics } = headerOf(['distance', 'success']);
    const record = {
      index: 2,
      episodeId: 'e/2',
      status: 'COMPLETED',
      steps: 4,
      metrics: { success: 1 },
      droppedMetrics: [
        { name: 'distance', value: '-Infinity', nodeId: 'env', step: 3 },
        { name: 'a', value: 'NaN', nodeId: 'env', step: 3 },
      ],
    };
    const text = csvRow(header) + csvRow(rowOf(record as unknown as Parameters<typeof rowOf>[0], metrics));
    const [row] = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(row).toMatchObject({ droppedMetrics: 'a=NaN; distance=-Infinity', 'metric.distance': '', 'metric.success': '1' });
    const clean = rowOf({ ...record, droppedMetrics: undefined } as unknown as Parameters<typeof rowOf>[0], metrics);
    expect(clean[header.indexOf('droppedMetrics')]).toBe('');
  });
});

describe('CSV text cells', () => {
  it('of the header, named by the graph’s metrics, never start a formula and read back as metric.<name>', () => {
    const names = ['=HYPERLINK("http://evil.example","click")', '+1', '-2', '@SUM(A1:A9)', '\tindented', 'plain'];
    const { header, metrics } = headerOf(names);
    const record = { index: 0, episodeId: 'e/0', status: 'COMPLETED', steps: 1, metrics: Object.fromEntries(names.map((n, i) => [n, i])) };
    const text = csvRow(header) + csvRow(rowOf(record as unknown as Parameters<typeof rowOf>[0], metrics));
    const [cells, values] = parse(text) as string[][];
    for (const cell of cells!) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    expect(cells!.filter((c) => c.startsWith('metric.'))).toEqual([...names].sort().map((n) => `metric.${n}`));
    expect(values![cells!.indexOf('metric.=HYPERLINK("http://evil.example","click")')]).toBe('0');
  });

  it('that a spreadsheet would run as a formula start with a quote; numbers stay as they are', () => {
    const { header, metrics } = headerOf(['answer', 'delta', 'ok']);
    const record = {
      index: 0,
      episodeId: 'qa/test/1',
      status: 'ERROR',
      steps: 1,
      instruction: '=HYPERLINK("http://evil.example","click")',
      task: '+1 more',
      sampleId: '-2',
      scene: '@SUM(A1:A9)',
      cluster: '\tindented',
      error: '\rcarriage',
      metrics: { answer: 'Paris = capital', delta: -5, ok: true },
    };
    const text = csvRow(header) + csvRow(rowOf(record as unknown as Parameters<typeof rowOf>[0], metrics));
    const [row] = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(row).toMatchObject({
      instruction: `'=HYPERLINK("http://evil.example","click")`,
      task: "'+1 more",
      sampleId: "'-2",
      scene: "'@SUM(A1:A9)",
      cluster: "'\tindented",
      error: "'\rcarriage",
      'metric.answer': 'Paris = capital',
      'metric.delta': '-5',
      'metric.ok': 'true',
      index: '0',
    });
  });
});

describe('what a dataset episode was asked and answered', () => {
  it('comes out as flat input, target, answer and extracted cells, cut at SAMPLE_TEXT_CHARS and formula-safe', () => {
    const { header, metrics } = headerOf(['score']);
    const long = 'x'.repeat(SAMPLE_TEXT_CHARS + 50);
    const score = { scorer: 'exact', value: 0, answer: long, extracted: '=1+1', target: ['-3', 'minus three'], explanation: 'no' };
    const record = {
      index: 0,
      episodeId: 'qa/test/q1',
      status: 'COMPLETED',
      steps: 1,
      sampleId: 'q1',
      instruction: '@What is 1 - 4?',
      metrics: { score: 0 },
      scores: [score, { ...score, scorer: 'includes', value: 1, rescored: true }],
    };
    const text = csvRow(header) + csvRow(rowOf(record as unknown as Parameters<typeof rowOf>[0], metrics));
    const [row] = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(row).toMatchObject({ input: "'@What is 1 - 4?", target: '["-3","minus three"]', extracted: "'=1+1", 'metric.score': '0' });
    expect(row!.answer).toHaveLength(SAMPLE_TEXT_CHARS);
    expect(row!.answer!.endsWith('x…')).toBe(true);
    // Not a dataset episode: the cells stay empty.
    const plain = rowOf({ ...record, sampleId: undefined, scores: undefined } as unknown as Parameters<typeof rowOf>[0], metrics);
    expect(['input', 'target', 'answer', 'extracted'].map((c) => plain[header.indexOf(c)])).toEqual(['', '', '', '']);
  });
});
