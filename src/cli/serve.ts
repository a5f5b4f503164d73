/**
 * `evalctl serve [--port 4000] [--host 127.0.0.1] [--outputs ./outputs] [--cancel-running-on-exit]
 * [--allow-origin URL …] [--allowed-hosts NAME,…] [--ram-mb MB] [--vram-mb MB]`: the GraphQL API and the dashboard on one port. Prints the URL.
 * SIGTERM or SIGINT stops it gracefully: it stops serving, waits for the running runs to
 * finish (starting no queued one), then exits; with --cancel-running-on-exit, or on a second
 * signal, the running runs are cancelled instead. Listening beyond loopback needs EVAL_API_TOKEN.
 * --ram-mb/--vram-mb give admission a capacity for memory it cannot measure (no nvidia-smi).
 * --eval-hung-ms sets how long a run's eval process may send no heartbeat before it is killed (HUNG).
 * --resume retries at start the runs the previous server's stop interrupted (docs/retry.md).
 */
import { BadInputError } from '../errors.js';
import { DEFAULT_OUTPUTS_DIR, defaultLlmCacheDir } from '../paths.js';
import { listeningLine } from './listen-urls.js';
import { intFlag, parseCliArgs } from './args.js';
import { shownRedisUrl } from '../scaleout/redis-connection.js';
import { signalExitCode } from './signal-exit.js';
import { shutdownTracing, startTracing } from '../tracing/tracing.js';

const USAGE =
  'usage: evalctl serve [--port 4000] [--host 127.0.0.1] [--outputs DIR] [--cancel-running-on-exit] [--allow-origin URL …] [--allowed-hosts NAME,…] [--ram-mb MB] [--vram-mb MB] [--cores N] [--eval-hung-ms MS] [--resume] [--redis URL [--redis-lost-ms MS]] [--allow-code-tools]\n' +
  '  listening on a non-loopback host requires EVAL_API_TOKEN; clients send "Authorization: Bearer <token>"';

export interface ServeArgs {
  port: number;
  host: string;
  outputsDir: string;
  cancelRunningOnExit: boolean;
  allowedOrigins: string[];
  /** Admission's static ledger, used only for a resource that cannot be measured. */
  staticCapacity: { ramMb?: number; vramMb?: number };
  /** CPU cores admission shares out among runs; absent: the machine's (os.availableParallelism()). */
  cores?: number;
  /** Silence after which a run's eval process is killed and the run ends ABORTED, HUNG (0: never); absent: the scheduler's default. */
  evalHungMs?: number;
  /** Host names besides loopback ones the server may be addressed by (comma-separated, repeatable). */
  allowedHosts: string[];
  /** Retry at start the runs the previous server's stop interrupted (docs/retry.md). */
  resume: boolean;
  /** Scale-out: admitted runs go on BullMQ in this Redis for `evalctl worker`s. */
  redis?: { url: string; redisLostMs?: number };
  /** Runs may offer code-running tools (python, command tools); EVAL_ALLOW_CODE_TOOLS=1 does the same. */
  allowCodeTools: boolean;
  help: boolean;
}

export function parseServeArgs(argv: string[]): ServeArgs {
  const parsed = parseCliArgs(
    {
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string', short: 'p' },
        host: { type: 'string' },
        outputs: { type: 'string' },
        'cancel-running-on-exit': { type: 'boolean' },
        'allow-origin': { type: 'string', multiple: true },
        'ram-mb': { type: 'string' },
        'vram-mb': { type: 'string' },
        cores: { type: 'string' },
        'eval-hung-ms': { type: 'string' },
        resume: { type: 'boolean' },
        'allowed-hosts': { type: 'string', multiple: true },
        redis: { type: 'string' },
        'redis-lost-ms': { type: 'string' },
        'allow-code-tools': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    USAGE,
  );
  const v = parsed.values;
  const rawPort = v.port ?? '4000';
  const port = Number(rawPort);
  if (rawPort.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new BadInputError(`--port must be an integer from 0 to 65535, got "${rawPort}"`);
  }
  const host = v.host ?? '127.0.0.1';
  if (host.trim() === '') throw new BadInputError('--host must not be empty');
  const staticCapacity: ServeArgs['staticCapacity'] = {};
  for (const [flag, key] of [
    ['ram-mb', 'ramMb'],
    ['vram-mb', 'vramMb'],
  ] as const) {
    const mb = intFlag(flag, v[flag], 0, 'a whole number of MB (0 or more)');
    if (mb !== undefined) staticCapacity[key] = mb;
  }
  const cores = intFlag('cores', v.cores, 1, 'a whole number of cores (1 or more)');
  const evalHungMs = intFlag('eval-hung-ms', v['eval-hung-ms'], 0, 'a whole number of milliseconds (0 turns the check off)');
  const redisLostMs = intFlag('redis-lost-ms', v['redis-lost-ms'], 1, 'a whole number of milliseconds (1 or more)');
  if (v.redis !== undefined && !/^rediss?:\/\//.test(v.redis))
    throw new BadInputError(`--redis must be a redis:// URL, got "${shownRedisUrl(v.redis)}"`);
  if (redisLostMs !== undefined && v.redis === undefined) throw new BadInputError('--redis-lost-ms needs --redis');
  return {
    ...(v.redis !== undefined ? { redis: { url: v.redis, ...(redisLostMs !== undefined ? { redisLostMs } : {}) } } : {}),
    port,
    host,
    ...(cores !== undefined ? { cores } : {}),
    ...(evalHungMs !== undefined ? { evalHungMs } : {}),
    outputsDir: v.outputs ?? DEFAULT_OUTPUTS_DIR,
    cancelRunningOnExit: v['cancel-running-on-exit'] === true,
    allowedOrigins: v['allow-origin'] ?? [],
    staticCapacity,
    allowedHosts: (v['allowed-hosts'] ?? [])
      .flatMap((list) => list.split(','))
      .map((h) => h.trim())
      .filter((h) => h !== ''),
    resume: v.resume === true,
    allowCodeTools: v['allow-code-tools'] === true,
    help: v.help === true,
  };
}

export async function run(argv: string[]): Promise<number> {
  const args = parseServeArgs(argv);
  if (args.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  // Loaded after the flags are checked: a typo is answered without loading the server.
  const { buildApp } = await import('../app.js');
  defaultLlmCacheDir(args.outputsDir);
  const app = buildApp({
    outputsDir: args.outputsDir,
    host: args.host,
    allowedOrigins: args.allowedOrigins,
    allowedHosts: args.allowedHosts,
    scheduler: {
      staticCapacity: args.staticCapacity,
      ...(args.cores !== undefined ? { cores: args.cores } : {}),
      ...(args.evalHungMs !== undefined ? { evalHungMs: args.evalHungMs } : {}),
      ...(args.resume ? { resumeInterrupted: true } : {}),
      ...(args.allowCodeTools ? { allowCodeTools: true } : {}),
    },
    ...(args.redis
      ? { redis: { redisUrl: args.redis.url, ...(args.redis.redisLostMs !== undefined ? { redisLostMs: args.redis.redisLostMs } : {}) } }
      : {}),
  });
  const tracing = await startTracing({ role: 'server', log: (line) => process.stderr.write(`evalctl serve: ${line}\n`) });
  const { url, port } = await app.start(args.port);
  process.stdout.write(`${listeningLine(args.host, port, url)}\n`);
  if (tracing) process.stdout.write(`tracing runs to ${tracing.url}\n`);
  // The spans of the runs that just ended are exported before the process exits.
  const stopApp = (opts: { cancelRunning: boolean }) => app.stop(opts).finally(shutdownTracing);

  return new Promise<number>((resolveExit) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals += 1;
      if (signals === 1) {
        const running = app.scheduler.drainableRuns();
        // Runs on the scale-out fleet need this server to commit: a stop ends them ABORTED instead of waiting.
        const onFleet = app.scheduler.activeJobs().length - running;
        const fleetNote =
          onFleet > 0
            ? `; ${onFleet} run(s) on the scale-out workers end ABORTED, committed episodes kept (serve --resume goes on with them)`
            : '';
        const what =
          (args.cancelRunningOnExit
            ? 'cancelling running runs'
            : running > 0
              ? `waiting for ${running} running run(s) to finish; ${signal} again cancels them`
              : onFleet > 0
                ? 'no run is running here'
                : 'no run is running') + fleetNote;
        process.stderr.write(`evalctl serve: ${signal}, stopping (${what})\n`);
        stopApp({ cancelRunning: args.cancelRunningOnExit }).then(
          () => resolveExit(0),
          (err: unknown) => {
            process.stderr.write(`evalctl serve: stopping failed: ${err instanceof Error ? err.message : String(err)}\n`);
            resolveExit(1);
          },
        );
      } else if (signals === 2) {
        process.stderr.write(`evalctl serve: ${signal} again, cancelling running runs\n`);
        void app.stop({ cancelRunning: true });
      } else {
        process.stderr.write(`evalctl serve: ${signal} a third time, exiting now\n`);
        process.exit(signalExitCode(signal));
      }
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
