/**
 * Live Play: one episode of a graph run in this process with per-step events, while the
 * scheduler's interactive lock is held (so no batch run starts meanwhile). The episode runs in a
 * throwaway run directory under the OS temp folder; its images travel inside the events as
 * data URLs, so nothing has to be served afterwards.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BadInputError, ConflictError, GraphValidationError, NotFoundError, errorMessage, isInputFault } from '../errors.js';
import { applyOverrides, validateGraph } from '../graph/graph.js';
import type { GraphCatalog } from '../graph/graph-catalog.js';
import { entriesUsedBy, NodesetRegistry, type NodesetEntry } from '../nodeset-registry/registry.js';
import type { GraphSpec, NodeOutputs } from '../core/types.js';
import { playRunInput, runSpecOf, type Overrides, type PlayInput, type RunInput } from '../spec/run-spec.js';
import { assertRunPolicy, runPolicyFromEnv, type RunPolicy } from '../spec/run-policy.js';
import type { EpisodeStatus } from '../statuses.js';
import { createRunDir, episodeDir, writeSpec } from '../store/run-dir.js';
import { assertBuiltinEnvSelection } from '../scheduler/dataset-selection.js';
import { mimeOf } from '../store/run-reader.js';
import type { EpisodeRecord } from '../store/types.js';

export type { PlayInput } from '../spec/run-spec.js';

export type PlayEvent =
  | { kind: 'STARTED'; holder: string; graphName: string; index: number }
  | {
      kind: 'STEP';
      step: number;
      observation: unknown;
      action: unknown;
      metrics: unknown;
      done: boolean;
      image: string | null;
      outputs: Record<string, NodeOutputs>;
    }
  | { kind: 'FINISHED'; status: EpisodeStatus; record: EpisodeRecord; image: string | null };

/** A checked play request, ready to run. */
export interface PreparedPlay {
  input: PlayInput;
  /** The one-episode run it plays (overrides with rendering turned on). */
  run: RunInput;
  /** Its graph, overrides applied. */
  graph: GraphSpec;
  /** The code-running tools it offers ("node.tool"). */
  codeTools: string[];
}

export interface PlayRunnerOptions {
  graphs: Pick<GraphCatalog, 'load'>;
  nodesets: { list(): NodesetEntry[] | Promise<NodesetEntry[]> };
  lock: { acquireInteractiveLock(holder: string): () => void };
  /** Where throwaway run dirs go. @default os.tmpdir() */
  tmpDir?: string;
  /** What a play may ask, as a submitted run (spec/run-policy.ts). @default runPolicyFromEnv() */
  policy?: RunPolicy;
}

/** Config key that makes an env emit its picture every step. */
const RENDER_EVERY_STEP = 'render_every_step';

let playCounter = 0;

export class PlayRunner {
  readonly #o: PlayRunnerOptions;

  constructor(options: PlayRunnerOptions) {
    this.#o = options;
  }

  /** Checks the request (graph exists, overrides name its nodes) before anything starts; the schema checked the rest. */
  async prepare(input: PlayInput): Promise<PreparedPlay> {
    const source = this.#loadGraph(input.graphName);
    const overrides = await this.#overridesWithRendering(source.nodes, input.overrides);
    const run = playRunInput({ ...input, overrides });
    const entries = await this.#o.nodesets.list();
    // A dataset or split a built-in env lacks is refused here, before the lock is taken.
    await assertBuiltinEnvSelection(entriesUsedBy(source.nodes, entries), run);
    const graph = applyOverrides(source, overrides);
    const registry = new NodesetRegistry(entries);
    // The user's overrides only: the rendering switch is the server's own.
    const codeTools = assertRunPolicy({
      graph,
      overrides: input.overrides,
      functionOf: (type) => registry.resolve(type)?.fn,
      policy: this.#o.policy ?? runPolicyFromEnv(),
    });
    // As startEval checks it (each config value against its declared type): a bad override is refused
    // before STARTED and the lock, with every problem listed.
    try {
      validateGraph(graph, registry);
    } catch (err) {
      if (err instanceof GraphValidationError) throw new BadInputError(`overrides: ${err.message}`, { cause: err });
      throw err;
    }
    return { input, run, graph, codeTools };
  }

  /**
   * Plays the episode, calling `emit` with STARTED, one STEP per iteration and FINISHED.
   * Resolves when the episode has ended and everything is cleaned up; `signal` stops it early
   * (the episode ends CANCELLED).
   */
  async play(prepared: PreparedPlay, emit: (e: PlayEvent) => void, signal?: AbortSignal): Promise<void> {
    const { input } = prepared;
    const holder = `play ${input.graphName} #${input.index} (${++playCounter})`;
    const release = this.#o.lock.acquireInteractiveLock(holder);
    const root = await mkdtemp(join(this.#o.tmpDir ?? tmpdir(), 'eval-play-'));
    try {
      const { runId, dir } = createRunDir(root);
      const spec = runSpecOf(prepared.run, { runId, graph: prepared.graph, codeTools: prepared.codeTools });
      await writeSpec(dir, spec);
      emit({ kind: 'STARTED', holder, graphName: input.graphName, index: input.index });

      const assetsDir = join(episodeDir(dir, 0), 'assets');
      let lastImage: string | null = null;
      // Steps are forwarded in order, each after its image (if any) has been read.
      let chain = Promise.resolve();
      const { runBatch } = await import('../eval-process/run-batch.js');
      let record: EpisodeRecord | undefined;
      const summary = await runBatch({
        runDir: dir,
        ...(signal ? { signal } : {}),
        onStep: ({ step, outputs }) => {
          chain = chain.then(async () => {
            const imageName = findAssetRef(outputs);
            if (imageName) lastImage = (await readAssetDataUrl(assetsDir, imageName)) ?? lastImage;
            emit({
              kind: 'STEP',
              step,
              observation: findPort(outputs, 'observation'),
              action: findPort(outputs, 'action'),
              metrics: findPort(outputs, 'metrics'),
              done: Object.values(outputs).some((o) => o.done === true),
              image: imageName ? lastImage : null,
              outputs,
            });
          });
        },
        onEpisode: (r) => {
          record = r;
        },
      });
      await chain;
      if (summary.status === 'FAILED') {
        const message = summary.error?.message ?? 'the episode could not start';
        if (isInputFault(summary.error?.code)) throw new BadInputError(message);
        throw new Error(message);
      }
      record ??= summary.episodes[0];
      if (!record) throw new ConflictError(`the episode did not run (run ended ${summary.status})`);
      const finalAsset = [...(record.assets ?? [])].reverse().find((a) => a.mime.startsWith('image/'));
      const finalImage = finalAsset ? ((await readAssetDataUrl(assetsDir, finalAsset.name)) ?? lastImage) : lastImage;
      emit({ kind: 'FINISHED', status: record.status, record, image: finalImage });
    } finally {
      release();
      await rm(root, { recursive: true, force: true }).catch(() => {});
    }
  }

  #loadGraph(name: string) {
    try {
      return this.#o.graphs.load(name);
    } catch (err) {
      if (err instanceof NotFoundError) throw new BadInputError(errorMessage(err), { cause: err });
      throw err;
    }
  }

  /** The user's overrides, plus `render_every_step: true` on every node whose function understands it. */
  async #overridesWithRendering(nodes: Array<{ id: string; type: string }>, user: Overrides): Promise<Overrides> {
    const rendering = new Set<string>();
    for (const entry of await this.#o.nodesets.list()) {
      for (const fn of entry.manifest.functions) {
        if (fn.config && RENDER_EVERY_STEP in fn.config) rendering.add(`${entry.name}__${fn.name}`);
      }
    }
    const out: Overrides = { ...user };
    for (const node of nodes) {
      if (rendering.has(node.type)) out[node.id] = { [RENDER_EVERY_STEP]: true, ...(user[node.id] ?? {}) };
    }
    return out;
  }
}

/** The first value of `port` among the iteration's node outputs. */
function findPort(outputs: Record<string, NodeOutputs>, port: string): unknown {
  for (const o of Object.values(outputs)) if (port in o) return o[port];
  return null;
}

function findAssetRef(outputs: Record<string, NodeOutputs>): string | undefined {
  for (const o of Object.values(outputs)) {
    for (const v of Object.values(o)) {
      if (typeof v === 'object' && v !== null && typeof (v as { $assetRef?: unknown }).$assetRef === 'string') {
        return (v as { $assetRef: string }).$assetRef;
      }
    }
  }
  return undefined;
}

const PNG_END = Buffer.from([0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);

/**
 * The asset as a data URL. The episode writer saves assets without waiting, so the file may be
 * missing or half-written for a moment: retry until it is complete (a PNG ends with IEND).
 */
async function readAssetDataUrl(dir: string, name: string): Promise<string | null> {
  const mime = mimeOf(name);
  for (let attempt = 0; attempt < 40; attempt++) {
    try {
      const data = await readFile(join(dir, name));
      const complete = mime === 'image/png' ? data.length >= 8 && data.subarray(data.length - 8).equals(PNG_END) : data.length > 0;
      if (complete) return `data:${mime};base64,${data.toString('base64')}`;
    } catch {
      // not there yet
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return null;
}
