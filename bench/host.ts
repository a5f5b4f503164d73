/**
 * Host benchmarks: the cost of one remote call over loopback (p50/p99) beside calling the same
 * handler in-process, and the throughput of the BatchedInferenceServer with 8 concurrent
 * callers beside one call at a time, on policy_mlp (built, in dist/nodesets) when it exists;
 * then the host's HTTP client and server beside undici and node:http (bench/host-http.ts).
 * Needs a build (hosts run from dist/). Run alone: `node --import tsx bench/host.ts`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILTIN_NODESETS_DIR, HOST_MAIN, PACKAGE_ROOT } from '../src/paths.js';
import { HostClient } from '../src/host/host-client.js';
import { spawnHost, type HostEntry, type HostProcess } from '../src/host/host-process.js';
import { loadManifest } from '../src/nodeset-registry/manifest.js';
import { loadNodesetModule } from '../src/nodeset-registry/nodeset-module.js';
import { BatchedInferenceServer } from '../src/host/batched-inference-server.js';
import { benchHostHttp } from './host-http.js';
import type { BatchedNodeFunction, CallContext, NodeCallArgs, NodeOutputs, NodesetModule } from '../src/core/types.js';

const TARGET_REMOTE_P50_US = 250;
const TARGET_BATCH_SPEEDUP = 3;
const CALLERS = 8;
const LATENCY_CALLS = 5_000;
const LATENCY_WARMUP = 2_000;
const BATCH_ROWS = 2_400;
const ROUNDS = 3;

const ECHO_DIR = join(PACKAGE_ROOT, 'test', 'fixtures', 'nodesets', 'echo');
const POLICY_DIR = join(BUILTIN_NODESETS_DIR, 'policy_mlp');
const STAND_IN_DIR = join(PACKAGE_ROOT, 'bench', 'fixtures', 'mlp_stand_in');

const ctx = (step: number, callerId?: string): CallContext => ({
  runSeed: 0,
  episodeIndex: 0,
  seed: 42,
  step,
  episodeKey: 'bench:0',
  nodeId: 'policy',
  ...(callerId !== undefined ? { callerId } : {}),
});

/** A cart-pole-like observation that varies with i. */
const observation = (i: number): number[] => [Math.sin(i) * 0.5, Math.cos(i * 0.7) * 0.3, Math.sin(i * 1.3) * 0.1, Math.cos(i * 0.2) * 0.4];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function entryOf(dir: string): Promise<HostEntry> {
  const manifest = await loadManifest(dir);
  return { name: manifest.name, dir, manifest };
}

async function latencies(n: number, warmup: number, once: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < warmup; i++) await once(i);
  const us: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await once(i);
    us.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  us.sort((a, b) => a - b);
  return { p50: percentile(us, 0.5), p99: percentile(us, 0.99) };
}

/** Rows per second: `callers` callers each making their share of `rows` calls one after another. */
async function throughput(
  client: HostClient,
  callers: number,
  rows: number,
  config: Record<string, unknown>,
): Promise<{ rowsPerS: number; meanBatch: number }> {
  const before = await client.stats();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async (_, c) => {
      const callerId = `bench/w${c}`;
      for (let i = c; i < rows; i += callers) {
        await client.call({ function: 'act', inputs: { observation: observation(i) }, config, ctx: ctx(i, callerId) });
      }
      // As a worker does when its chunk is done: the others' last batch must not wait for it.
      await client.releaseCaller(callerId);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const after = await client.stats();
  const batches = after.batcher!.batches - before.batcher!.batches;
  return { rowsPerS: rows / seconds, meanBatch: batches === 0 ? 0 : (after.batcher!.rows - before.batcher!.rows) / batches };
}

/** The same measurement against a BatchedInferenceServer in this process: the batcher's own cost, no HTTP. */
async function throughputInProcess(
  handler: BatchedNodeFunction,
  callers: number,
  rows: number,
  config: Record<string, unknown>,
): Promise<{ rowsPerS: number; meanBatch: number }> {
  const server = new BatchedInferenceServer({ maxBatchSize: 64 });
  try {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: callers }, async (_, c) => {
        const callerId = `bench/w${c}`;
        for (let i = c; i < rows; i += callers) {
          await server.submit('act', config, { inputs: { observation: observation(i) }, config, ctx: ctx(i, callerId) }, handler);
        }
        server.releaseCaller(callerId);
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    return { rowsPerS: rows / seconds, meanBatch: server.stats().meanBatchSize };
  } finally {
    server.close();
  }
}

function table(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  return all.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')).join('\n');
}

const fmt = (n: number, digits = 1): string => n.toFixed(digits);

export async function benchHost(): Promise<void> {
  if (!existsSync(HOST_MAIN)) throw new Error(`${HOST_MAIN} is missing: build first (npm run build:server)`);
  const hosts: HostProcess[] = [];
  const clients: HostClient[] = [];
  try {
    // ---------------------------------------------------------------- one call
    const echoEntry = await entryOf(ECHO_DIR);
    const echoMod = await loadNodesetModule(ECHO_DIR, echoEntry.manifest);
    const echoHost = await spawnHost({ entry: echoEntry });
    hosts.push(echoHost);
    const echoClient = new HostClient(echoHost.url);
    clients.push(echoClient);
    const echoArgs = (i: number): NodeCallArgs => ({ inputs: { x: i }, config: {}, ctx: ctx(i) });
    const echoFn = echoMod.functions!.echo!;
    const direct = await latencies(LATENCY_CALLS * 4, LATENCY_WARMUP, async (i) => echoFn(echoArgs(i)));
    const remote = await latencies(LATENCY_CALLS, LATENCY_WARMUP, (i) => echoClient.call({ function: 'echo', ...echoArgs(i) }));

    const usePolicy = existsSync(join(POLICY_DIR, 'manifest.json'));
    const policyDir = usePolicy ? POLICY_DIR : STAND_IN_DIR;
    const policyName = usePolicy ? 'policy_mlp__act' : 'mlp_stand_in__act (policy_mlp not built)';
    const policyEntry = await entryOf(policyDir);
    const policyMod: NodesetModule = await loadNodesetModule(policyDir, policyEntry.manifest);
    await policyMod.init?.({ dir: policyDir, manifest: policyEntry.manifest });
    const policyHost = await spawnHost({ entry: policyEntry });
    hosts.push(policyHost);
    const policyClient = new HostClient(policyHost.url);
    clients.push(policyClient);
    const actBatch = policyMod.batched!.act!;
    const policyArgs = (i: number): NodeCallArgs => ({ inputs: { observation: observation(i) }, config: {}, ctx: ctx(i, 'bench/solo') });
    const policyDirect = await latencies(LATENCY_CALLS, LATENCY_WARMUP, async (i) => (await actBatch([policyArgs(i)]))[0] as NodeOutputs);
    const policyRemote = await latencies(LATENCY_CALLS, LATENCY_WARMUP, (i) => policyClient.call({ function: 'act', ...policyArgs(i) }));
    await policyClient.releaseCaller('bench/solo');

    console.log('One call: the handler awaited in-process vs the same handler over HTTP on loopback (µs)');
    console.log(
      table(
        ['handler', 'direct p50', 'direct p99', 'remote p50', 'remote p99', `target p50 ≤ ${TARGET_REMOTE_P50_US}`],
        [
          [
            'echo (trivial, protocol cost only)',
            fmt(direct.p50, 2),
            fmt(direct.p99, 2),
            fmt(remote.p50),
            fmt(remote.p99),
            remote.p50 <= TARGET_REMOTE_P50_US ? 'met' : 'MISSED',
          ],
          [
            `${policyName}, 1 caller`,
            fmt(policyDirect.p50, 2),
            fmt(policyDirect.p99, 2),
            fmt(policyRemote.p50),
            fmt(policyRemote.p99),
            policyRemote.p50 <= TARGET_REMOTE_P50_US ? 'met' : 'MISSED',
          ],
        ],
      ),
    );

    // ---------------------------------------------------------------- batching
    type Measure = (callers: number, rows: number) => Promise<{ rowsPerS: number; meanBatch: number }>;
    const rows: string[][] = [];
    /** Alternates one-at-a-time and concurrent runs; reports the round with the median speedup (the machine is shared). */
    const compare = async (label: string, measure: Measure, n: number): Promise<void> => {
      await measure(1, Math.ceil(n / 10));
      await measure(CALLERS, Math.ceil(n / 5));
      const rounds = [];
      for (let r = 0; r < ROUNDS; r++) {
        const one = await measure(1, n);
        const many = await measure(CALLERS, n);
        rounds.push({ one, many, speedup: many.rowsPerS / one.rowsPerS });
      }
      rounds.sort((a, b) => a.speedup - b.speedup);
      const { one, many, speedup } = rounds[Math.floor(rounds.length / 2)]!;
      rows.push([
        label,
        fmt(one.rowsPerS, 0),
        fmt(many.rowsPerS, 0),
        fmt(many.meanBatch),
        `${fmt(speedup, 2)}×`,
        speedup >= TARGET_BATCH_SPEEDUP ? 'met' : 'MISSED',
      ]);
    };
    for (const overhead of [0, 2]) {
      const config = overhead > 0 ? { call_overhead_ms: overhead } : {};
      const n = overhead > 0 ? BATCH_ROWS / 8 : BATCH_ROWS;
      await compare(
        `in-process batcher, call_overhead_ms=${overhead}`,
        (callers, k) => throughputInProcess(actBatch, callers, k, config),
        n,
      );
    }
    for (const overhead of [0, 2]) {
      const config = overhead > 0 ? { call_overhead_ms: overhead } : {};
      const n = overhead > 0 ? BATCH_ROWS / 8 : BATCH_ROWS;
      await compare(`host over HTTP, call_overhead_ms=${overhead}`, (callers, k) => throughput(policyClient, callers, k, config), n);
    }
    console.log(
      `\nBatching ${policyName}: rows/s with one call at a time vs ${CALLERS} concurrent callers (each calling in a loop; median of ${ROUNDS} rounds)`,
    );
    console.log(
      table(['handler', '1 at a time', `${CALLERS} callers`, 'mean batch', 'speedup', `target ≥ ${TARGET_BATCH_SPEEDUP}×`], rows),
    );
    console.log(
      '(call_overhead_ms sleeps once per handler call, like an accelerator launch; policy_mlp also re-prepares its weights once per call.\n' +
        ' Over HTTP each row still pays its own request, so a tiny CPU model gains less there than in the batcher itself.)',
    );
  } finally {
    for (const c of clients) c.close();
    await Promise.all(hosts.map((h) => h.stop()));
  }
  console.log('');
  await benchHostHttp();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchHost().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
