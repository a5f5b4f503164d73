/**
 * The inside of a play lane (play-lanes.ts): some of a run's workers, in a worker thread of the
 * eval process, with hosts of their own on this thread. It builds the run's registry and graph,
 * starts its workers' hosts, and plays from the run's shared cursor; each finished episode's
 * folder is written here and its record goes to the main thread, which folds it into the summary.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CodedError, type ErrorCode, errorMessage } from '../errors.js';
import { validateGraph } from '../graph/graph.js';
import { placedNodesets } from '../nodeset-registry/placement.js';
import { NodesetRegistry } from '../nodeset-registry/registry.js';
import { storageCodeOf } from '../store/storage-fault.js';
import { rememberHostSecret } from '../host/host-secret.js';
import { shutdownTracing, startTracing } from '../tracing/tracing.js';
import { runSpanInfo } from './run-span-info.js';
import { BatchEvalRunner, type EpisodeSink } from './batch-eval-runner.js';
import { envPanelOf } from './env-panel-target.js';
import { EpisodeCursor } from './episode-cursor.js';
import { LANE_BEAT_MS, LANE_IDLE, LANE_PLAYING, type LaneMessage, type LaneRequest, type PlayLaneData } from './play-lane-protocol.js';
import { startRunHosts, type RunHosts } from './run-hosts.js';
import { adoptModelKeys } from '../core/model-keys.js';

async function main(): Promise<void> {
  const port = parentPort!;
  const data = workerData as PlayLaneData;
  adoptModelKeys(data.modelKeys);
  // Counted only while this thread's event loop turns: a call that holds the thread stops it.
  const beats = new Int32Array(data.beats);
  const beat = (): number => Atomics.add(beats, data.lane, 1);
  // The first beat at once: from here on the lane is judged, however soon a call holds it.
  beat();
  setInterval(beat, LANE_BEAT_MS).unref();
  const post = (m: LaneMessage): void => port.postMessage(m);
  const stop = new AbortController();
  let go!: (order: number | readonly number[]) => void;
  const told = new Promise<number | readonly number[]>((resolve) => (go = resolve));
  let start!: () => void;
  const started = new Promise<void>((resolve) => (start = resolve));
  /** Lent hosts that moved, applied once the runner exists (and again by it from then on). */
  const moved = new Map<string, string>();
  let move: ((nodeset: string, url: string) => void) | undefined;
  port.on('message', (m: LaneRequest) => {
    if (m.type === 'go') go(m.order);
    else if (m.type === 'start') start();
    else if (m.type === 'moved') {
      if (m.secret !== undefined) rememberHostSecret(m.url, m.secret);
      moved.set(m.nodeset, m.url);
      move?.(m.nodeset, m.url);
    } else stop.abort(m.code ? new CodedError(m.code as ErrorCode, m.message) : new Error(m.message));
  });
  for (const [url, secret] of Object.entries(data.secrets)) rememberHostSecret(url, secret);
  const log = (line: string): void => post({ type: 'log', line });
  let registry: NodesetRegistry | undefined;
  let hosts: RunHosts | undefined;
  let outcome: LaneMessage = { type: 'done' };
  try {
    // The main thread's scan, not another: 11-47 ms of a lane's boot here, and the same manifests.
    registry = new NodesetRegistry(data.nodesets);
    const graph = validateGraph(data.graph, registry);
    const used = placedNodesets(graph, registry);
    const shared = used.filter((e) => e.manifest.parallelism === 'shared');
    hosts = await startRunHosts({
      registry,
      shared,
      replicated: used.filter((e) => e.manifest.parallelism === 'replicated'),
      lent: data.lent,
      workerCount: data.workerCount,
      firstWorkerId: data.firstWorkerId,
      tagged: true,
      cores: data.cores,
      ...(data.env ? { env: data.env } : {}),
      signal: stop.signal,
      onStderr: log,
    });
    hosts.pool.startOthers();
    const sink: EpisodeSink = {
      addEpisode: (record) => {
        post({ type: 'episode', record });
        return Promise.resolve(null);
      },
      retireWorker: (workerId, reason) => post({ type: 'retire', workerId, reason }),
    };
    // Episode spans go under the main thread's run span, exported from this thread.
    const tracing = data.traceparent ? await startTracing({ role: 'eval', log }) : undefined;
    const span = tracing && data.traceparent ? tracing.joinRun(runSpanInfo(data.spec), data.traceparent) : undefined;
    const envPanel = envPanelOf(used);
    const runner = new BatchEvalRunner({
      spec: data.spec,
      runDir: data.runDir,
      graph,
      pool: hosts.pool,
      summary: sink,
      sharedUrls: hosts.sharedUrls,
      runWorkerCount: data.runWorkerCount,
      concurrency: { workers: data.runWorkerCount, maxInFlight: data.maxInFlight },
      lentNodesets: shared.filter((e) => data.lent[e.name]).map((e) => e.name),
      signal: stop.signal,
      log,
      ...(envPanel ? { envPanel } : {}),
      ...(span ? { trace: span } : {}),
      onEpisodeStart: ({ index, workerId }) => post({ type: 'start', index, workerId }),
      ...(data.reportWritten ? { onEpisodeWritten: (record) => post({ type: 'written', record }) } : {}),
      ...(data.reportPlayed ? { onRecord: (record) => post({ type: 'played', record }) } : {}),
    });
    const laneHosts = hosts;
    move = (nodeset, url) => {
      if (laneHosts.moveShared(nodeset, url)) runner.moveSharedHost(nodeset, url);
    };
    for (const [nodeset, url] of moved) move(nodeset, url);
    const stopped = new Promise<null>((resolve) => stop.signal.addEventListener('abort', () => resolve(null), { once: true }));
    const resumed = data.resumeOrder !== undefined;
    const order = stop.signal.aborted ? null : resumed ? data.resumeOrder! : await Promise.race([told, stopped]);
    // A lane started again holds the claim its first thread made.
    const claimed =
      order !== null && (resumed || Atomics.compareExchange(new Int32Array(data.claims), data.lane, LANE_IDLE, LANE_PLAYING) === LANE_IDLE);
    if (claimed && data.together && !resumed) {
      post({ type: 'claimed' });
      await Promise.race([started, stopped]);
    }
    if (claimed && !stop.signal.aborted) await runner.execute(new EpisodeCursor(order, data.cursor));
  } catch (err) {
    const code = err instanceof CodedError ? err.code : (storageCodeOf(err, data.runDir) ?? null);
    outcome = { type: 'failed', code, message: errorMessage(err), stopped: stop.signal.aborted };
  } finally {
    await hosts?.close();
    registry?.close();
    // The main thread ends this thread once it hears the outcome: the spans go out first.
    await shutdownTracing();
  }
  post(outcome);
}

void main();
