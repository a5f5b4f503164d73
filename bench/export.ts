/**
 * Export benchmark: the server's memory while it streams a run's episodes as CSV, for a
 * 1,000- and a 10,000-episode run. Each size gets its own `evalctl serve` process, whose peak
 * RSS (VmHWM) is read from /proc before and after the download: flat memory means the peak
 * does not grow with the episode count. Linux only. Run alone: `node --import tsx bench/export.ts`.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { DIST_DIR } from '../src/paths.js';
import { runsRoot } from '../src/store/run-dir.js';

const SIZES = [1_000, 10_000];
const RUN_ID = '20260101_120000';

async function writeRun(outputs: string, episodes: number): Promise<void> {
  const dir = join(runsRoot(outputs), RUN_ID);
  for (let i = 0; i < episodes; i++) {
    const ep = join(dir, 'episodes', `ep${String(i).padStart(4, '0')}`);
    await mkdir(ep, { recursive: true });
    const record = {
      index: i,
      episodeId: `gridnav/val/${i}`,
      status: 'COMPLETED',
      steps: 40 + (i % 17),
      metrics: { success: i % 2, spl: (i % 100) / 100, distance_to_goal: i % 9, steps: 40 + (i % 17) },
      seed: 1000 + i,
      workerId: i % 4,
      durationMs: 120,
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:00:00.120Z',
      task: i % 3 === 0 ? 'small' : 'large',
      instruction: 'go to the goal, then "stop"',
      stepBudget: 100,
      assets: [],
    };
    await writeFile(join(ep, 'episode.json'), JSON.stringify(record, null, 2));
  }
}

const kb = async (pid: number, field: 'VmHWM' | 'VmRSS'): Promise<number> => {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(await readFile(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? NaN);
};

export async function benchExport(): Promise<void> {
  const rows: string[][] = [];
  for (const n of SIZES) {
    const tmp = await mkdtemp(join(tmpdir(), 'bench-export-'));
    const outputs = join(tmp, 'outputs');
    await writeRun(outputs, n);
    const server = execa(process.execPath, [join(DIST_DIR, 'main.js'), 'serve', '--port', '0', '--outputs', outputs], { reject: false });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        server.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        void server.then(() => reject(new Error(`server exited: ${out}`)));
      });
      // A warm-up download, so the peak measured after is the export's and not the first request's.
      await (await fetch(`${url}/runs/${RUN_ID}/export.csv`)).arrayBuffer();
      const before = await kb(server.pid!, 'VmHWM');
      const t0 = performance.now();
      const res = await fetch(`${url}/runs/${RUN_ID}/export.csv`);
      let bytes = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
      const ms = performance.now() - t0;
      const after = await kb(server.pid!, 'VmHWM');
      rows.push([String(n), (bytes / 1e6).toFixed(2), ms.toFixed(0), (before / 1024).toFixed(1), (after / 1024).toFixed(1)]);
    } finally {
      server.kill('SIGTERM');
      await server;
      await rm(tmp, { recursive: true, force: true });
    }
  }
  const headers = ['episodes', 'CSV MB', 'ms', 'peak RSS before MB', 'peak RSS after MB'];
  const all = [headers, ...rows];
  const widths = headers.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  console.log(all.map((r) => r.map((cell, c) => cell.padStart(widths[c]!)).join('  ')).join('\n'));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await benchExport();
