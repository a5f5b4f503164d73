/**
 * Cancel drills shared by the cancel soak (bench/cancel-soak.ts) and the suite
 * (test/cancel-drill.test.ts): cancel running runs through the API the way the scheduler
 * really stops them (SIGTERM to the eval process's group), and Ctrl-C `evalctl run` the way a
 * terminal does (SIGINT to the whole foreground process group). Each drill reports what the
 * run ended with: its status and error, how its episodes ended, whether its aggregates count
 * the finished episodes only, and which of its processes outlived it.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { DIST_DIR } from '../src/paths.js';
import { FILES, readSummary } from '../src/store/run-dir.js';
import type { RunSummary } from '../src/store/types.js';

/** When a drill cancels: after this many episodes have finished, then after `delayMs` more. */
export interface CancelMoment {
  afterEpisodes: number;
  delayMs: number;
}

export interface DrillResult {
  how: 'api' | 'sigint';
  workers: number;
  moment: CancelMoment;
  status: string;
  error: { code: string; message: string } | null;
  /** Episodes by ending. */
  endings: Record<string, number>;
  crashed: number;
  /** True when every metric's count equals the episodes that reported it and did not end CANCELLED. */
  aggregatesFinishedOnly: boolean;
  /** Processes of the run (eval process, hosts) still alive once it ended. */
  leftovers: number[];
  /** `evalctl run`'s exit code (SIGINT drills only). */
  exitCode?: number | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Every pid the eval process logged for itself and its hosts. */
function runPids(runDir: string): number[] {
  const path = join(runDir, FILES.stdout);
  if (!existsSync(path)) return [];
  const pids = new Set<number>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    for (const m of line.matchAll(/\bpid (\d+)\b/g)) pids.add(Number(m[1]));
  }
  return [...pids];
}

/** The checks every drill makes of a finished run. */
function judge(summary: RunSummary): Pick<DrillResult, 'status' | 'error' | 'endings' | 'crashed' | 'aggregatesFinishedOnly'> {
  const endings: Record<string, number> = {};
  for (const e of summary.episodes) endings[e.status] = (endings[e.status] ?? 0) + 1;
  const counted = summary.episodes.filter((e) => e.status !== 'CANCELLED');
  const aggregatesFinishedOnly = summary.aggregateMetrics.every(
    (m) => m.count === counted.filter((e) => typeof e.metrics[m.name] === 'number' || typeof e.metrics[m.name] === 'boolean').length,
  );
  return { status: summary.status, error: summary.error, endings, crashed: endings.CRASHED ?? 0, aggregatesFinishedOnly };
}

async function waitForEpisodes(runDir: string, n: number): Promise<void> {
  await until(`${n} finished episode(s) in ${runDir}`, async () => {
    const s = await readSummary(runDir).catch(() => null);
    return s !== null && (s.episodesDone >= n || (s.status !== 'RUNNING' && s.status !== 'QUEUED'));
  });
}

const STEP_LATENCY_MS = 15;

export interface ApiDrillOptions {
  /** One cancel per entry: the run's worker count and when to cancel it. */
  plan: Array<{ workers: number; moment: CancelMoment }>;
  onResult?(r: DrillResult): void;
}

/** Starts one server and, one after another, starts and cancels a gridnav run through GraphQL. */
export async function apiCancelDrill(opts: ApiDrillOptions): Promise<DrillResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'cancel-drill-'));
  const quiet = { info: () => {}, warn: () => {}, error: (m: string) => process.stderr.write(`[server] ${m}\n`) };
  const app = buildApp({
    outputsDir: join(dir, 'outputs'),
    logger: quiet,
    webDir: join(dir, 'no-web'),
    scheduler: { tickIntervalMs: 200, cancelGraceMs: 5000 },
  });
  const { url } = await app.start(0);
  const gql = async (query: string, variables: Record<string, unknown>) => {
    const res = await fetch(url + '/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: any; errors?: Array<{ message: string }> };
    if (body.errors) throw new Error(body.errors.map((e) => e.message).join('; '));
    return body.data;
  };
  const results: DrillResult[] = [];
  try {
    for (const { workers, moment } of opts.plan) {
      const started = await gql(`mutation($input: StartEvalInput!) { startEval(input: $input) { runId } }`, {
        input: {
          graphName: 'gridnav_planner',
          episodeCount: 40,
          workerCount: workers,
          overrides: { env: { step_latency_ms: STEP_LATENCY_MS } },
        },
      });
      const runId = started.startEval.runId as string;
      const runDir = app.scheduler.getRunDir(runId);
      await waitForEpisodes(runDir, moment.afterEpisodes);
      await sleep(moment.delayMs);
      await gql(`mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: runId });
      const run = await until('the run to end', async () => {
        const r = (await gql(`query($id: ID!) { run(id: $id) { status } activeJobs { runId } }`, { id: runId })) as {
          run: { status: string };
          activeJobs: unknown[];
        };
        return r.run.status !== 'RUNNING' && r.run.status !== 'QUEUED' && r.activeJobs.length === 0 ? r : null;
      });
      void run;
      const summary = await readSummary(runDir);
      const pids = runPids(runDir);
      const leftovers = await until(
        "the run's processes to go",
        async () => {
          const left = pids.filter(alive);
          return left.length === 0 ? [] : null;
        },
        10_000,
      ).catch(() => pids.filter(alive));
      const r: DrillResult = { how: 'api', workers, moment, ...judge(summary), leftovers };
      results.push(r);
      opts.onResult?.(r);
    }
  } finally {
    await app.stop({ cancelRunning: true });
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
  return results;
}

export interface SigintDrillOptions {
  plan: Array<{ workers: number; moment: CancelMoment }>;
  onResult?(r: DrillResult): void;
}

/**
 * Starts `evalctl run --json` in its own process group, as a shell starts a foreground job,
 * and interrupts it as Ctrl-C does: SIGINT to the whole group.
 */
export async function sigintDrill(opts: SigintDrillOptions): Promise<DrillResult[]> {
  const results: DrillResult[] = [];
  for (const { workers, moment } of opts.plan) {
    const dir = await mkdtemp(join(tmpdir(), 'cancel-drill-cli-'));
    try {
      const outputs = join(dir, 'out');
      const cli = spawn(
        process.execPath,
        [
          join(DIST_DIR, 'main.js'),
          'run',
          'gridnav_planner',
          '--episodes',
          '40',
          '--workers',
          String(workers),
          '--set',
          `env.step_latency_ms=${STEP_LATENCY_MS}`,
          '--outputs',
          outputs,
          '--json',
        ],
        { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ACTIVE_WORKSPACE_DIR: '' } },
      );
      let stdout = '';
      cli.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      cli.stderr.resume();
      const exited = new Promise<number | null>((resolve) => cli.once('exit', (code) => resolve(code)));
      const runsDir = join(outputs, 'eval_runs');
      const runDir = await until('the run directory', () => {
        const names = existsSync(runsDir) ? readdirSync(runsDir) : [];
        return names[0] ? join(runsDir, names[0]) : null;
      });
      await waitForEpisodes(runDir, moment.afterEpisodes);
      await sleep(moment.delayMs);
      try {
        process.kill(-cli.pid!, 'SIGINT');
      } catch {
        // already gone: the run finished first
      }
      const exitCode = await exited;
      const summary = stdout.trim() ? (JSON.parse(stdout) as RunSummary) : await readSummary(runDir);
      const pids = runPids(runDir);
      const leftovers = await until("the run's processes to go", () => (pids.some(alive) ? null : []), 10_000).catch(() =>
        pids.filter(alive),
      );
      const r: DrillResult = { how: 'sigint', workers, moment, ...judge(summary), leftovers, exitCode };
      results.push(r);
      opts.onResult?.(r);
    } finally {
      await rm(dir, { recursive: true, force: true }).catch(() => {});
    }
  }
  return results;
}

/** One line per drill, for logs. */
export function describeDrill(r: DrillResult): string {
  const endings = Object.entries(r.endings)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return (
    `${r.how} w${r.workers} after ${r.moment.afterEpisodes} ep +${r.moment.delayMs} ms: ${r.status}${r.error ? ` (${r.error.code})` : ''}; ${endings || 'no episodes'}` +
    `${r.aggregatesFinishedOnly ? '' : '; AGGREGATES COUNT CANCELLED EPISODES'}${r.leftovers.length ? `; leftovers ${r.leftovers.join(',')}` : ''}${r.exitCode !== undefined ? `; exit ${r.exitCode}` : ''}`
  );
}
