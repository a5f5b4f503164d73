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
const outputs = await mkdtemp('/dev/shm/b/prof-');
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
const extra = process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir', '/tmp/prof/out'] : [];
const t0 = performance.now();
const r = await execa(process.execPath, [...extra, EVAL_PROCESS_MAIN, '--run-dir', dir], {
  stdin: 'ignore',
  reject: false,
  env: { OPENAI_API_KEY: KEY, EVAL_LLM_CACHE_DIR: join(outputs, 'c') },
});
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
proc.kill('SIGTERM');
