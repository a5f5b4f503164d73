/**
 * The host server of one nodeset: the host protocol (docs/host-protocol.md) over HTTP/JSON on
 * 127.0.0.1, serving a `NodesetModule`'s functions, its env panel and keyed-state eviction.
 * Batched functions go through a BatchedInferenceServer.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { HostError, errorMessage } from '../errors.js';
import { BatchedInferenceServer, type BatcherStats } from './batched-inference-server.js';
import { bodyText } from './in-process-hosts.js';
import type { JsonHttpAnswer, JsonHttpRequest, JsonHttpServer } from './json-http-server.js';
import type {
  BatchedNodeFunction,
  EndpointStats,
  FunctionSpec,
  HostCallRequest,
  HostHealth,
  NodeCallArgs,
  NodeFunction,
  NodesetManifest,
  NodesetModule,
  PanelFieldSpec,
  PanelState,
  PanelValues,
} from '../core/types.js';
import { NON_FINITE_OUTPUT } from '../core/types.js';
import { nonFiniteNotes } from './non-finite.js';

export interface CreateHostOptions {
  manifest: NodesetManifest;
  /** The nodeset's folder. */
  dir: string;
  module: NodesetModule;
  /** Distinguishes replicated hosts of one nodeset (reported by /health). */
  tag?: string;
  /**
   * Upper bound of a random delay added before each call, to shake out timing dependence in
   * tests. Timing only: never affects results.
   * @default Number(process.env.EVAL_HOST_INJECT_DELAY_MS) || 0
   */
  injectDelayMs?: number;
  /** Requests must present this secret (`Authorization: Bearer …`); others get 401. @default none: open to any local caller */
  secret?: string;
}

export interface Host {
  /** Listens on 127.0.0.1; resolves with the port (0 = chosen by the OS). */
  listen(port?: number): Promise<number>;
  /** Answers one request as the HTTP server would (errors become their status and `{ error }`): the in-process path. */
  handle(req: JsonHttpRequest): Promise<JsonHttpAnswer>;
  /** Stops listening, fails waiting batched calls, drops connections. Idempotent. */
  close(): Promise<void>;
}

/** `GET /stats`: counters of a Node host (not part of the protocol other hosts must speak). */
export interface HostStats {
  /** Calls received on /call. */
  calls: number;
  /** The batcher's counters; null when the nodeset has no batched function. */
  batcher: BatcherStats | null;
  /** The model endpoints the nodeset calls, with their limits (empty when it calls none). */
  endpoints: EndpointStats[];
}

/** A request the client got wrong: answered with this status and a message naming the bad value. */
class RouteError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Callable = { kind: 'single'; fn: NodeFunction } | { kind: 'batched'; fn: BatchedNodeFunction };

const MAX_BODY_BYTES = 64 * 1024 * 1024;

function resolveCallables(manifest: NodesetManifest, mod: NodesetModule): Map<string, { spec: FunctionSpec; call: Callable }> {
  const out = new Map<string, { spec: FunctionSpec; call: Callable }>();
  const missing: string[] = [];
  for (const spec of manifest.functions) {
    const batched = mod.batched?.[spec.name];
    const single = mod.functions?.[spec.name];
    if (spec.batched && typeof batched === 'function') out.set(spec.name, { spec, call: { kind: 'batched', fn: batched } });
    else if (typeof single === 'function') out.set(spec.name, { spec, call: { kind: 'single', fn: single } });
    else if (typeof batched === 'function') out.set(spec.name, { spec, call: { kind: 'batched', fn: batched } });
    else missing.push(spec.name);
  }
  if (missing.length > 0) {
    throw new HostError(
      `nodeset "${manifest.name}": the module exports no handler for ${missing.map((m) => `"${m}"`).join(', ')} (declared in its manifest)`,
    );
  }
  return out;
}

function sameValue(a: string | number, b: unknown): boolean {
  return a === b || String(a) === String(b);
}

/** Panel state of one host: the current value of each cascading field. */
class PanelModel {
  readonly values: PanelValues = {};

  constructor(
    private readonly fields: PanelFieldSpec[],
    private readonly actions: string[],
    private readonly handler: NonNullable<NodesetModule['panel']>,
  ) {
    for (const f of fields) this.resetField(f);
  }

  state(): PanelState {
    const options: PanelState['options'] = {};
    for (const f of this.fields) options[f.name] = this.optionsBefore(f);
    return { values: { ...this.values }, options };
  }

  setField(name: unknown, value: unknown): PanelState {
    const field = this.fields.find((f) => f.name === name);
    if (!field)
      throw new RouteError(400, `unknown panel field ${JSON.stringify(name)}; fields: ${this.fields.map((f) => f.name).join(', ')}`);
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new RouteError(400, `panel field "${field.name}" needs a string or number value, got ${JSON.stringify(value)}`);
    }
    const allowed = this.optionsBefore(field);
    const match = allowed.find((o) => sameValue(o, value));
    if (match === undefined) {
      throw new RouteError(400, `bad value ${JSON.stringify(value)} for panel field "${field.name}"; allowed: ${formatAllowed(allowed)}`);
    }
    this.values[field.name] = match;
    // Every field that depends on this one, directly or through another, goes back to its default.
    const changed = new Set([field.name]);
    for (const f of this.fields) {
      if (f.dependsOn?.some((d) => changed.has(d))) {
        changed.add(f.name);
        this.resetField(f);
      }
    }
    return this.state();
  }

  /**
   * The selection `given` names, checked field by field in cascade order as setField checks one,
   * with each field it leaves out at its default; the host's own panel state is not touched, so
   * callers that each carry their selection can share one host.
   */
  checked(given: unknown): PanelValues {
    if (typeof given !== 'object' || given === null || Array.isArray(given)) {
      throw new RouteError(400, `"values" must be an object of panel field values, got ${JSON.stringify(given)}`);
    }
    const g = given as Record<string, unknown>;
    for (const name of Object.keys(g)) {
      if (!this.fields.some((f) => f.name === name)) {
        throw new RouteError(400, `unknown panel field ${JSON.stringify(name)}; fields: ${this.fields.map((f) => f.name).join(', ')}`);
      }
    }
    const values: PanelValues = {};
    for (const field of this.fields) {
      const value = g[field.name];
      let match: string | number | undefined;
      if (value === undefined) {
        const allowed = this.handler.options(field.name, { ...values });
        const def = field.default;
        match = def !== undefined ? (allowed.find((o) => sameValue(o, def)) ?? allowed[0]) : allowed[0];
      } else {
        if (typeof value !== 'string' && typeof value !== 'number') {
          throw new RouteError(400, `panel field "${field.name}" needs a string or number value, got ${JSON.stringify(value)}`);
        }
        match = this.handler.option
          ? this.handler.option(field.name, value, { ...values })
          : this.handler.options(field.name, { ...values }).find((o) => sameValue(o, value));
        if (match === undefined) {
          const allowed = this.handler.options(field.name, { ...values });
          throw new RouteError(
            400,
            `bad value ${JSON.stringify(value)} for panel field "${field.name}"; allowed: ${formatAllowed(allowed)}`,
          );
        }
      }
      if (match !== undefined) values[field.name] = match;
    }
    return values;
  }

  action(name: unknown): PanelState {
    if (typeof name !== 'string' || !this.actions.includes(name)) {
      throw new RouteError(400, `unknown panel action ${JSON.stringify(name)}; actions: ${this.actions.join(', ') || '(none)'}`);
    }
    return this.state();
  }

  private optionsBefore(field: PanelFieldSpec): Array<string | number> {
    const before: PanelValues = {};
    for (const f of this.fields) {
      if (f === field) break;
      const v = this.values[f.name];
      if (v !== undefined) before[f.name] = v;
    }
    return this.handler.options(field.name, before);
  }

  private resetField(field: PanelFieldSpec): void {
    const allowed = this.optionsBefore(field);
    const def = field.default;
    const value = def !== undefined ? (allowed.find((o) => sameValue(o, def)) ?? allowed[0]) : allowed[0];
    if (value === undefined) delete this.values[field.name];
    else this.values[field.name] = value;
  }
}

function formatAllowed(allowed: Array<string | number>): string {
  if (allowed.length === 0) return '(none)';
  const shown = allowed.slice(0, 20).map((o) => JSON.stringify(o));
  return allowed.length > 20 ? `${shown.join(', ')} … (${allowed.length} in all)` : shown.join(', ');
}

/** The request's JSON body ({} when empty); a body that is not JSON is a 400. */
function readBody(req: JsonHttpRequest): unknown {
  if (req.body.length === 0) return {};
  try {
    return JSON.parse(bodyText(req));
  } catch (err) {
    throw new RouteError(400, `request body is not valid JSON: ${errorMessage(err)}`);
  }
}

const ok = (body: unknown): JsonHttpAnswer => ({ status: 200, body });

function field(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
}

function requireString(body: unknown, name: string): string {
  const v = field(body, name);
  if (typeof v !== 'string' || v.length === 0)
    throw new RouteError(400, `"${name}" must be a non-empty string, got ${JSON.stringify(v) ?? 'nothing'}`);
  return v;
}

export function createHost(options: CreateHostOptions): Host {
  const { manifest, module: mod } = options;
  const tag = options.tag ?? null;
  const injectDelayMs = options.injectDelayMs ?? (Number(process.env.EVAL_HOST_INJECT_DELAY_MS) || 0);
  const callables = resolveCallables(manifest, mod);
  const batcher = [...callables.values()].some((c) => c.call.kind === 'batched')
    ? new BatchedInferenceServer(manifest.batching ?? {})
    : undefined;
  if (manifest.panel && !mod.panel)
    throw new HostError(`nodeset "${manifest.name}" declares a panel but its module exports no panel handler`);
  const panel = manifest.panel && mod.panel ? new PanelModel(manifest.panel.fields, manifest.panel.actions, mod.panel) : undefined;
  const health: HostHealth = { ok: true, nodeset: manifest.name, tag, pid: process.pid };
  let calls = 0;
  let randomInt: ((min: number, max: number) => number) | undefined;

  function needPanel(): PanelModel {
    if (!panel) throw new RouteError(404, `nodeset "${manifest.name}" has no panel`);
    return panel;
  }

  async function call(body: unknown, http: JsonHttpRequest): Promise<unknown> {
    const req = body as Partial<HostCallRequest>;
    const name = requireString(body, 'function');
    const entry = callables.get(name);
    if (!entry) {
      throw new RouteError(404, `unknown function "${name}" in nodeset "${manifest.name}"; functions: ${[...callables.keys()].join(', ')}`);
    }
    const ctx = req.ctx;
    if (typeof ctx !== 'object' || ctx === null)
      throw new RouteError(400, `"ctx" must be an object (the call context), got ${JSON.stringify(ctx) ?? 'nothing'}`);
    const inputs = req.inputs ?? {};
    const config = req.config ?? {};
    if (typeof inputs !== 'object' || typeof config !== 'object') throw new RouteError(400, '"inputs" and "config" must be objects');
    calls += 1;
    if (injectDelayMs > 0) {
      // Loaded only here: node:crypto costs every host's start-up ~10 ms, and only tests inject delays.
      randomInt ??= (await import('node:crypto')).randomInt;
      await sleep(randomInt(0, injectDelayMs + 1));
    }
    // The signal (an AbortController and its listeners cost ~6 µs) is made only if a handler reads it.
    const args: NodeCallArgs = {
      inputs,
      config,
      ctx,
      get signal() {
        return http.signal;
      },
    };
    try {
      const outputs =
        entry.call.kind === 'batched'
          ? await batcher!.submit(name, config, args, entry.call.fn, (abandon) => http.onHangUp(abandon))
          : await entry.call.fn(args);
      if (typeof outputs !== 'object' || outputs === null || Array.isArray(outputs)) {
        return {
          error: `${manifest.name}__${name} returned ${Array.isArray(outputs) ? 'an array' : typeof outputs}, not an object of outputs`,
        };
      }
      const nonFinite = nonFiniteNotes(outputs);
      return { outputs: nonFinite ? { ...outputs, [NON_FINITE_OUTPUT]: nonFinite } : outputs };
    } catch (err) {
      return { error: errorMessage(err) };
    }
  }

  const manifestJson = JSON.stringify(manifest);
  const healthJson = JSON.stringify(health);
  const routes =
    'GET /manifest, GET /health, GET /stats, POST /call, GET /panel, POST /panel/field, POST /panel/action, POST /panel/load, POST /panel/costs, POST /evict, POST /callers/release';

  async function route(req: JsonHttpRequest): Promise<JsonHttpAnswer> {
    const key = `${req.method} ${req.path}`;
    switch (key) {
      case 'GET /manifest':
        return { status: 200, json: manifestJson };
      case 'GET /health':
        return { status: 200, json: healthJson };
      case 'GET /stats': {
        const stats: HostStats = { calls, batcher: batcher?.stats() ?? null, endpoints: mod.endpoints?.() ?? [] };
        return ok(stats);
      }
      case 'POST /call':
        // A caller that hangs up (timeout, cancel) aborts the handler's signal.
        return ok(await call(readBody(req), req));
      case 'GET /panel':
        return ok(needPanel().state());
      case 'POST /panel/field': {
        const body = readBody(req);
        return ok(needPanel().setField(field(body, 'field'), field(body, 'value')));
      }
      case 'POST /panel/action':
        return ok(needPanel().action(field(readBody(req), 'action')));
      case 'POST /panel/load': {
        const p = needPanel();
        const body = readBody(req);
        const episodeKey = requireString(body, 'episodeKey');
        // A load that carries its selection leaves the panel state alone (a host shared by several callers).
        const given = field(body, 'values');
        const loaded = await mod.panel!.load(given === undefined ? { ...p.values } : p.checked(given), episodeKey);
        if (typeof loaded !== 'object' || loaded === null || typeof loaded.episodeId !== 'string') {
          throw new RouteError(
            500,
            `nodeset "${manifest.name}": panel load returned ${JSON.stringify(loaded)}, which has no string "episodeId"`,
          );
        }
        return ok(loaded);
      }
      case 'POST /panel/costs': {
        const p = needPanel();
        const selections = field(readBody(req), 'selections');
        if (!Array.isArray(selections))
          throw new RouteError(400, `"selections" must be an array of panel values, got ${JSON.stringify(selections) ?? 'nothing'}`);
        const cost = mod.panel!.cost;
        if (!cost) return ok({ costs: null });
        const costs = selections.map((given): number | null => {
          try {
            const c = cost.call(mod.panel, p.checked(given));
            return typeof c === 'number' && Number.isFinite(c) ? c : null;
          } catch {
            // The load of that episode reports a bad selection in full; an order needs no error.
            return null;
          }
        });
        return ok({ costs });
      }
      case 'POST /evict': {
        const episodeKey = requireString(readBody(req), 'episodeKey');
        mod.evict?.(episodeKey);
        return ok({ ok: true });
      }
      case 'POST /callers/release': {
        const callerId = requireString(readBody(req), 'callerId');
        batcher?.releaseCaller(callerId);
        return ok({ ok: true });
      }
      default:
        throw new RouteError(404, `no route ${key}; routes: ${routes}`);
    }
  }

  const handle = (req: JsonHttpRequest): Promise<JsonHttpAnswer> =>
    route(req).catch((err: unknown): JsonHttpAnswer => {
      if (err instanceof RouteError) return { status: err.status, body: { error: err.message } };
      return { status: 500, body: { error: errorMessage(err) } };
    });
  // Made on listen(): a host served inside the eval process (on its main thread or in a worker
  // thread) never listens, and without the server's modules (node:net, node:crypto) a thread host boots sooner.
  let server: Promise<JsonHttpServer> | undefined;

  let closing: Promise<void> | undefined;
  return {
    async listen(port = 0) {
      if (closing) throw new HostError('the host is closed');
      server ??= import('./json-http-server.js').then(({ createJsonHttpServer }) =>
        createJsonHttpServer(handle, {
          maxBodyBytes: MAX_BODY_BYTES,
          keepAliveMs: 60_000,
          callerGone: () => new HostError('the caller went away'),
          ...(options.secret !== undefined ? { secret: options.secret } : {}),
        }),
      );
      return (await server).listen(port, '127.0.0.1');
    },
    handle,
    close() {
      closing ??= (async () => {
        try {
          batcher?.close();
        } catch {
          // nothing to recover: the batcher only rejects waiting calls
        }
        if (server) await (await server).close();
      })();
      return closing;
    },
  };
}
