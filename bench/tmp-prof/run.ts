import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
import { execa } from 'execa';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { EVAL_PROCESS_MAIN, PACKAGE_ROOT } from '../../src/paths.js';
import { runSpecSchema } from '../../src/spec/run-spec.js';
import { createRunDir, readSummary, writeSpec } from '../../src/store/run-dir.js';
const KEY = 'k';
const latency = Number(process.argv[2] ?? 0);
const episodes = Number(process.argv[3] ?? 1024);
const proc = execa(process.execPath, ['--import', 'tsx', join(PACKAGE_ROOT, 'test', 'support', 'openai-stub-main.ts'), '--port', '0'], {
  buffer: false,
  reject: false,
  stdin: 'ignore',
  env: { OPENAI_STUB_KEY: KEY },
});
const url = await new Promise<string>((resolve) => {
  createInterface({ input: proc.stdout! }).on('line', (l) => {
    if (l.startsWith('OPENAI_STUB_URL ')) resolve(l.slice(16).trim());
  });
});
await fetch(url.replace(/\/v1$/, '/options'), { method: 'POST', body: JSON.stringify({ expectedKey: KEY, latencyMs: latency }) });
for (let rep = 0; rep < Number(process.env.REPS ?? 1); rep++) {
  const outputs = await mkdtemp((process.env.OUT ?? '/dev/shm/b') + '/prof-');
  const { runId, dir } = createRunDir(outputs);
  const spec = runSpecSchema.parse({
    runId,
    createdAt: new Date().toISOString(),
    graphName: 'llm_fixture_qa',
    episodeCount: episodes,
    workerCount: 64,
    activeWorkspaceDir: join(PACKAGE_ROOT, 'test', 'fixtures', 'llm-workspace'),
    overrides: { llm: { base_url: url, cache: false, max_concurrency: 64 } },
  });
  await writeSpec(dir, spec);
  const extra = [
    ...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir', '/tmp/prof/out'] : []),
    ...(process.env.FLAGS ? process.env.FLAGS.split(' ') : []),
  ];
  const t0 = performance.now();
  const stubCpu = () => {
    const f = (require('node:fs') as typeof import('node:fs')).readFileSync(`/proc/${proc.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  };
  const c0 = stubCpu();
  const r = await execa(
    process.env.PERF ? '/usr/bin/perf' : process.env.TIME ? '/usr/bin/time' : process.execPath,
    [
      ...(process.env.PERF ? ['record', '-F', '2999', '-o', '/tmp/prof/perf.data', '--', process.execPath] : []),
      ...(process.env.TIME ? ['-f', 'eval cpu user %U sys %S', process.execPath] : []),
      ...extra,
      EVAL_PROCESS_MAIN,
      '--run-dir',
      dir,
    ],
    {
      stdin: 'ignore',
      reject: false,
      env: { OPENAI_API_KEY: KEY, EVAL_LLM_CACHE_DIR: join(outputs, 'c') },
    },
  );
  (await import('node:fs')).writeFileSync('/tmp/prof/stderr.txt', String(r.stderr));
  console.log(
    'stub cpu ms',
    stubCpu() - c0,
    String(r.stderr)
      .split('\n')
      .filter((l) => l.startsWith('eval cpu'))
      .join(''),
  );
  const s = await readSummary(dir);
  const starts = s.episodes.map((e) => Date.parse(e.startedAt));
  const ends = s.episodes.map((e) => Date.parse(e.finishedAt));
  console.log(
    'exit',
    r.exitCode,
    'wall',
    ((performance.now() - t0) / 1000).toFixed(2),
    'phase',
    ((Math.max(...ends) - Math.min(...starts)) / 1000).toFixed(2),
    JSON.stringify(s.statusCounts),
  );
  const t0s = Math.min(...starts);
  const byW = new Map<number, { i: number; st: number; en: number; lat: number }[]>();
  for (const e of s.episodes) {
    const w = Number((e as any).workerId ?? 0);
    const a = byW.get(w) ?? [];
    a.push({ i: e.index, st: Date.parse(e.startedAt) - t0s, en: Date.parse(e.finishedAt) - t0s, lat: Number(e.metrics.llm_latency_ms) });
    byW.set(w, a);
  }
  for (let r = 0; r < 6; r++) {
    const rs = [...byW.values()].map((a) => a.sort((x, y) => x.st - y.st)[r]).filter(Boolean) as any[];
    if (!rs.length) break;
    const q = (arr: number[]) => {
      const b = [...arr].sort((x, y) => x - y);
      return `${b[0]}/${b[b.length >> 1]}/${b[b.length - 1]}`;
    };
    console.log(
      'round',
      r,
      'start min/med/max',
      q(rs.map((x) => x.st)),
      'end',
      q(rs.map((x) => x.en)),
      'lat',
      q(rs.map((x) => Math.round(x.lat))),
    );
  }
}
proc.kill('SIGTERM');
