/**
 * `evalctl worker --redis URL --server URL [--slots K] [--token T] [--work-dir DIR] [--name N]
 * [--cores N] [--spares N] [--lock-ms MS] [--stalled-ms MS] [--eval-hung-ms MS]`: one machine of a scale-out fleet. Takes shards
 * of the runs `evalctl serve --redis URL` puts on the queue, plays each in an eval process here
 * and commits every finished episode to the server (docs/scale-out.md). SIGTERM or SIGINT stops
 * it: the shards in hand stop and go back to the queue for another worker. It starts only once
 * the server has taken an authenticated request: exit 2 when the server refuses the token (or
 * is no head), 1 when it cannot be reached; a token refused later stops it with exit 2.
 */
import { resolve } from 'node:path';
import { parseCliArgs, intFlag } from './args.js';
import { BadInputError } from '../errors.js';
import { makeDirs } from '../store/make-dirs.js';

const USAGE =
  'usage: evalctl worker --redis URL --server URL [--slots K] [--token T] [--work-dir DIR] [--name N] [--cores N] [--spares N] [--lock-ms MS] [--stalled-ms MS] [--head-retry-ms MS] [--eval-hung-ms MS]\n' +
  '  --token defaults to EVAL_API_TOKEN; --work-dir (default ./worker) holds the shards being played;\n' +
  '  --spares (default: the slots) eval processes are kept started and waiting, so a shard starts at once (0: none)';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCliArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      redis: { type: 'string' },
      server: { type: 'string' },
      slots: { type: 'string' },
      token: { type: 'string' },
      'work-dir': { type: 'string' },
      name: { type: 'string' },
      cores: { type: 'string' },
      spares: { type: 'string' },
      'lock-ms': { type: 'string' },
      'stalled-ms': { type: 'string' },
      'head-retry-ms': { type: 'string' },
      'eval-hung-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (!values.redis || !/^rediss?:\/\//.test(values.redis)) throw new BadInputError(`--redis must be a redis:// URL; ${USAGE}`);
  if (!values.server || !/^https?:\/\//.test(values.server))
    throw new BadInputError(`--server must be the server's http(s):// URL; ${USAGE}`);
  const slots = intFlag('slots', values.slots, 1) ?? 1;
  const cores = intFlag('cores', values.cores, 1);
  const spares = intFlag('spares', values.spares, 0);
  const lockDurationMs = intFlag('lock-ms', values['lock-ms'], 100);
  const stalledIntervalMs = intFlag('stalled-ms', values['stalled-ms'], 100);
  const headRetryMs = intFlag('head-retry-ms', values['head-retry-ms'], 0);
  const evalHungMs = intFlag('eval-hung-ms', values['eval-hung-ms'], 0, 'a whole number of milliseconds (0 turns the check off)');
  const workDir = resolve(values['work-dir'] ?? 'worker');
  makeDirs(workDir);
  const { ShardWorker } = await import('../scaleout/shard-worker.js');
  const { HeadRequestError } = await import('../scaleout/head-client.js');
  const log = {
    info: (m: string) => process.stderr.write(`[worker] ${m}\n`),
    warn: (m: string) => process.stderr.write(`[worker] warning: ${m}\n`),
    error: (m: string) => process.stderr.write(`[worker] error: ${m}\n`),
  };
  const worker = new ShardWorker({
    redisUrl: values.redis,
    serverUrl: values.server,
    token: values.token,
    slots,
    workDir,
    log,
    ...(values.name ? { name: values.name } : {}),
    ...(cores !== undefined ? { cores } : {}),
    ...(spares !== undefined ? { spares } : {}),
    ...(lockDurationMs !== undefined ? { lockDurationMs } : {}),
    ...(stalledIntervalMs !== undefined ? { stalledIntervalMs } : {}),
    ...(headRetryMs !== undefined ? { headRetryMs } : {}),
    ...(evalHungMs !== undefined ? { evalHungMs } : {}),
  });
  const server = values.server;
  /** Exit 2: the user's setting (token, URL) is wrong; 1: the head could not be reached. */
  const headFault = (err: InstanceType<typeof HeadRequestError>): number => {
    if (err.refused) {
      process.stderr.write(
        `evalctl worker: the server at ${server} refused this worker's token (${err.message}); give the server's token with --token or EVAL_API_TOKEN\n`,
      );
      return 2;
    }
    if (err.status === 404) {
      process.stderr.write(`evalctl worker: ${server} is no scale-out head (${err.message}); start it with evalctl serve --redis\n`);
      return 2;
    }
    process.stderr.write(`evalctl worker: ${err.message}\n`);
    return 1;
  };
  try {
    await worker.start();
  } catch (err) {
    await worker.close();
    if (err instanceof HeadRequestError) return headFault(err);
    throw err;
  }
  process.stdout.write(`worker ${worker.name} ready\n`);
  return new Promise<number>((resolveExit) => {
    const stop = (code: number) =>
      worker.close().then(
        () => resolveExit(code),
        () => resolveExit(1),
      );
    const onSignal = (signal: NodeJS.Signals) => {
      process.stderr.write(`evalctl worker: ${signal}, stopping\n`);
      void stop(0);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    // A token the head stopped taking: every shard would only go back on the queue.
    void worker.refused.then((err) => stop(headFault(err)));
  });
}
