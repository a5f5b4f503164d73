/**
 * The graph model: the JSON shape (zod), semantic validation against the known node types,
 * config overrides and `--set` flags. Nothing runs until a graph has passed validateGraph.
 */
import { z } from '../core/zod.js';
import { BadInputError, GraphValidationError } from '../errors.js';
import { configValueProblem } from './config-value.js';
import { showValue } from '../core/show-value.js';
import {
  GRAPH_OUT_TYPE,
  type GraphEdge,
  type GraphNode,
  type GraphSpec,
  type NodeTypeResolver,
  type ResolvedNodeType,
} from '../core/types.js';

/** Node ids may not contain `.`, which separates the node from the port in `node.port`. */
export const NODE_ID_PATTERN = /^[A-Za-z0-9_-]+$/;

const configSchema = z.record(z.string(), z.unknown());

const nodeSchema = z.strictObject({
  id: z.string().regex(NODE_ID_PATTERN, {
    error: (iss) => `node id ${JSON.stringify(iss.input)} may only contain letters, digits, "_" and "-"`,
  }),
  type: z.string().min(1, { error: 'node type must not be empty' }),
  config: configSchema.optional(),
});

const edgeSchema = z.strictObject({
  from: z.string(),
  to: z.string(),
  loop: z.boolean().optional(),
});

/** The most wall-clock seconds a step may be given (a graph's per_step_timeout_sec, a run's perStepTimeoutSec). */
export const MAX_PER_STEP_TIMEOUT_SEC = 3600;

/** The graph JSON of DESIGN §3. Unknown keys are refused so a misspelt `step_budget` cannot pass unseen. */
export const graphSchema = z.strictObject({
  name: z.string().min(1, { error: 'graph name must not be empty' }),
  description: z.string().optional(),
  step_budget: z.number().optional(),
  per_step_timeout_sec: z.number().optional(),
  /** The metric listed first wherever metrics are listed, over what the nodesets declare. */
  primary_metric: z.string().min(1, { error: 'must name a metric' }).optional(),
  /** Metric → which way is better, over what the nodesets declare. */
  metric_goals: z
    .record(z.string().min(1), z.enum(['max', 'min'], { error: 'must be "max" (higher is better) or "min" (lower is better)' }))
    .optional(),
  nodes: z.array(nodeSchema),
  edges: z.array(edgeSchema),
});

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || '(root)';
}

/** Checks the JSON shape; `source` (a file path or "request") names the graph in the error. */
export function parseGraph(json: unknown, source: string): GraphSpec {
  const result = graphSchema.safeParse(json);
  if (result.success) return result.data;
  const problems = result.error.issues.map((iss) => `${formatPath(iss.path)}: ${iss.message}`);
  throw new GraphValidationError(source, problems);
}

// ---------------------------------------------------------------- validation

export interface PortRef {
  node: string;
  port: string;
}

export interface ValidatedEdge {
  /** Position in `spec.edges`. */
  index: number;
  edge: GraphEdge;
  from: PortRef;
  to: PortRef;
  loop: boolean;
}

export interface ValidatedNode {
  node: GraphNode;
  /** Position in `spec.nodes`. */
  index: number;
  /** undefined for `graphOut`. */
  resolved: ResolvedNodeType | undefined;
  isGraphOut: boolean;
  /** Non-loop edges into this node, in spec order. */
  incoming: ValidatedEdge[];
  /** Loop edges into this node (their value is the previous iteration's), in spec order. */
  loopIncoming: ValidatedEdge[];
  /** Non-loop edges out of this node, in spec order. */
  outgoing: ValidatedEdge[];
}

export interface ValidatedGraph {
  spec: GraphSpec;
  /** In spec order. */
  nodes: ReadonlyMap<string, ValidatedNode>;
  /** Node ids in a topological order of the non-loop edges; ties keep spec order. */
  order: readonly string[];
  edges: readonly ValidatedEdge[];
  /** Ids of the graph-scope `graphOut` nodes (the metric sinks), in spec order. */
  graphOuts: readonly string[];
}

const edgeLabel = (e: GraphEdge): string => `edge "${e.from} -> ${e.to}"${e.loop ? ' (loop)' : ''}`;

function splitEndpoint(s: string): PortRef | undefined {
  const dot = s.indexOf('.');
  if (dot <= 0 || dot === s.length - 1) return undefined;
  return { node: s.slice(0, dot), port: s.slice(dot + 1) };
}

function levenshtein(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** The closest candidate within a few edits, for "did you mean" hints. */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDist = Infinity;
  const lower = word.toLowerCase();
  for (const c of candidates) {
    if (c === word) continue;
    const d = c.toLowerCase() === lower ? 0 : levenshtein(lower, c.toLowerCase());
    if (d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  return best !== undefined && bestDist <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

const didYouMean = (word: string, candidates: Iterable<string>): string => {
  const m = closestMatch(word, candidates);
  return m ? ` (did you mean "${m}"?)` : '';
};

const listOrNone = (names: readonly string[]): string => (names.length ? names.join(', ') : '(none)');

/**
 * Checks a parsed graph against the known node types and collects every problem: duplicate
 * ids, unknown types, malformed or dangling edges, unknown ports, doubly fed or unconnected
 * required inputs, unknown config keys, cycles without a loop edge, no graphOut, a bad
 * step_budget. Throws one GraphValidationError listing them all.
 */
export function validateGraph(spec: GraphSpec, resolver: NodeTypeResolver): ValidatedGraph {
  const problems: string[] = [];

  if (spec.step_budget !== undefined && !(Number.isInteger(spec.step_budget) && spec.step_budget > 0)) {
    problems.push(`step_budget must be a positive integer, got ${String(spec.step_budget)}`);
  }
  const perStep = spec.per_step_timeout_sec;
  if (perStep !== undefined && !(Number.isFinite(perStep) && perStep > 0 && perStep <= MAX_PER_STEP_TIMEOUT_SEC)) {
    problems.push(`per_step_timeout_sec must be a positive number of seconds, at most ${MAX_PER_STEP_TIMEOUT_SEC}, got ${String(perStep)}`);
  }

  const nodes = new Map<string, ValidatedNode>();
  const firstIndex = new Map<string, number>();
  const knownTypes = (): string[] => [GRAPH_OUT_TYPE, ...(resolver.knownTypes?.() ?? [])];
  spec.nodes.forEach((node, index) => {
    const seen = firstIndex.get(node.id);
    if (seen !== undefined) {
      problems.push(`duplicate node id "${node.id}" (nodes[${seen}] and nodes[${index}])`);
      return;
    }
    firstIndex.set(node.id, index);
    const isGraphOut = node.type === GRAPH_OUT_TYPE;
    const resolved = isGraphOut ? undefined : resolver.resolve(node.type);
    if (!isGraphOut && !resolved) {
      problems.push(`node "${node.id}": unknown type "${node.type}"${didYouMean(node.type, knownTypes())}`);
    }
    // graphOut only records what reaches it: a config key there would be frozen into the run and do nothing.
    if (isGraphOut && node.config && Object.keys(node.config).length > 0) {
      problems.push(
        `node "${node.id}": graphOut takes no config, got ${Object.keys(node.config)
          .map((k) => `"${k}"`)
          .join(', ')}`,
      );
    }
    if (resolved?.fn.config && node.config) {
      const known = Object.keys(resolved.fn.config);
      for (const [key, value] of Object.entries(node.config)) {
        const decl = resolved.fn.config[key];
        if (!decl || !Object.hasOwn(resolved.fn.config, key)) {
          problems.push(
            `node "${node.id}": unknown config key "${key}" for ${node.type}${didYouMean(key, known)}; known keys: ${listOrNone(known)}`,
          );
          continue;
        }
        const wrong = configValueProblem(decl, value);
        if (wrong) problems.push(`node "${node.id}": config "${key}" ${wrong}`);
      }
    }
    nodes.set(node.id, { node, index, resolved, isGraphOut, incoming: [], loopIncoming: [], outgoing: [] });
  });
  // Edges touching a node of unknown type get no port checks: that node's problem is already named.
  const typeKnown = (id: string): boolean => {
    const n = nodes.get(id);
    return !!n && (n.isGraphOut || !!n.resolved);
  };

  const edges: ValidatedEdge[] = [];
  const feeds = new Map<string, ValidatedEdge[]>();
  spec.edges.forEach((edge, index) => {
    const label = edgeLabel(edge);
    const from = splitEndpoint(edge.from);
    const to = splitEndpoint(edge.to);
    let ok = true;
    for (const [end, ref, raw] of [
      ['from', from, edge.from],
      ['to', to, edge.to],
    ] as const) {
      if (!ref) {
        problems.push(`${label}: "${end}" must be "node.port", got "${raw}"`);
        ok = false;
      } else if (!nodes.has(ref.node)) {
        problems.push(`${label}: unknown node "${ref.node}"${didYouMean(ref.node, nodes.keys())}`);
        ok = false;
      }
    }
    if (!ok || !from || !to) return;

    const src = nodes.get(from.node)!;
    const dst = nodes.get(to.node)!;
    if (typeKnown(from.node)) {
      const outputs = src.isGraphOut ? [] : src.resolved!.fn.outputs.map((p) => p.name);
      if (!outputs.includes(from.port)) {
        problems.push(
          `${label}: node "${from.node}" (${src.node.type}) has no output port "${from.port}"${didYouMean(from.port, outputs)}; its outputs: ${listOrNone(outputs)}`,
        );
        ok = false;
      }
    }
    if (typeKnown(to.node) && !dst.isGraphOut) {
      const inputs = dst.resolved!.fn.inputs.map((p) => p.name);
      if (!inputs.includes(to.port)) {
        problems.push(
          `${label}: node "${to.node}" (${dst.node.type}) has no input port "${to.port}"${didYouMean(to.port, inputs)}; its inputs: ${listOrNone(inputs)}`,
        );
        ok = false;
      }
    }
    const v: ValidatedEdge = { index, edge, from, to, loop: edge.loop === true };
    const key = `${to.node}.${to.port}`;
    feeds.set(key, [...(feeds.get(key) ?? []), v]);
    if (!ok) return;
    edges.push(v);
    if (v.loop) dst.loopIncoming.push(v);
    else {
      dst.incoming.push(v);
      src.outgoing.push(v);
    }
  });

  for (const [port, fed] of feeds) {
    if (fed.length > 1) {
      problems.push(`input port "${port}" is fed by ${fed.length} edges: ${fed.map((e) => edgeLabel(e.edge)).join(', ')}`);
    }
  }

  for (const n of nodes.values()) {
    if (!n.resolved) continue;
    for (const p of n.resolved.fn.inputs) {
      if (!p.optional && !feeds.has(`${n.node.id}.${p.name}`)) {
        problems.push(`node "${n.node.id}" (${n.node.type}): required input port "${p.name}" is not connected`);
      }
    }
  }

  const graphOuts = [...nodes.values()].filter((n) => n.isGraphOut).map((n) => n.node.id);
  if (graphOuts.length === 0) {
    problems.push(`no "${GRAPH_OUT_TYPE}" node: add one to collect the episode's metrics`);
  }

  const order = topologicalOrder(nodes);
  if (order.length < nodes.size) {
    for (const cycle of findCycles(nodes, new Set(order))) {
      problems.push(`cycle without a loop edge: ${[...cycle, cycle[0]].join(' -> ')} (mark one of its edges "loop": true)`);
    }
  }

  if (problems.length > 0) throw new GraphValidationError(spec.name, problems);
  return { spec, nodes, order, edges, graphOuts };
}

/** Kahn's algorithm over non-loop edges; among ready nodes the earliest in the spec goes first. */
function topologicalOrder(nodes: ReadonlyMap<string, ValidatedNode>): string[] {
  const indegree = new Map<string, number>();
  for (const n of nodes.values()) indegree.set(n.node.id, n.incoming.length);
  const byIndex = [...nodes.values()];
  const indexOf = new Map(byIndex.map((n, i) => [n.node.id, i]));
  const order: string[] = [];
  // Indices into byIndex, kept sorted ascending; graphs are small, so a sorted array is enough.
  const queue = byIndex.flatMap((n, i) => (n.incoming.length === 0 ? [i] : []));
  while (queue.length > 0) {
    const n = byIndex[queue.shift()!]!;
    order.push(n.node.id);
    for (const e of n.outgoing) {
      const left = indegree.get(e.to.node)! - 1;
      indegree.set(e.to.node, left);
      if (left === 0) {
        const i = indexOf.get(e.to.node)!;
        let at = queue.findIndex((q) => q > i);
        if (at < 0) at = queue.length;
        queue.splice(at, 0, i);
      }
    }
  }
  return order;
}

/** One simple cycle per strongly connected component of the nodes left over by the sort. */
function findCycles(nodes: ReadonlyMap<string, ValidatedNode>, sorted: ReadonlySet<string>): string[][] {
  const rest = [...nodes.keys()].filter((id) => !sorted.has(id));
  const restSet = new Set(rest);
  const succ = (id: string): string[] =>
    nodes
      .get(id)!
      .outgoing.map((e) => e.to.node)
      .filter((t) => restSet.has(t));

  // Tarjan's SCC.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const sccs: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of succ(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      sccs.push(scc);
    }
  };
  for (const v of rest) if (!index.has(v)) visit(v);

  const cycles: string[][] = [];
  for (const scc of sccs) {
    const members = new Set(scc);
    const start = rest.find((id) => members.has(id))!;
    if (scc.length === 1 && !succ(start).includes(start)) continue;
    // Shortest path from start back to itself inside the component (BFS).
    const parent = new Map<string, string>();
    const queue = [start];
    let last: string | undefined;
    while (queue.length > 0 && last === undefined) {
      const u = queue.shift()!;
      for (const w of succ(u)) {
        if (!members.has(w)) continue;
        if (w === start) {
          last = u;
          break;
        }
        if (!parent.has(w)) {
          parent.set(w, u);
          queue.push(w);
        }
      }
    }
    const path: string[] = [];
    for (let u: string | undefined = last; u !== undefined && u !== start; u = parent.get(u)) path.unshift(u);
    cycles.push([start, ...path]);
  }
  return cycles;
}

// ---------------------------------------------------------------- overrides

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** Keys that would reach an object's prototype when assigned: refused in config, overrides and `--set`. */
export const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
function assertSafeKey(key: string, where: string): void {
  if (UNSAFE_KEYS.has(key)) throw new BadInputError(`config key "${key}" is not allowed (${where})`);
}

function deepMerge(base: Record<string, unknown>, patch: Record<string, unknown>, where: string): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    assertSafeKey(k, where);
    const prev = out[k];
    out[k] = isPlainObject(prev) && isPlainObject(v) ? deepMerge(prev, v, where) : v;
  }
  return out;
}

/** Levels of arrays and objects a node's override may nest (the patch object is level 1): config patches, not data. */
export const MAX_OVERRIDE_DEPTH = 64;

/** How deep `v` nests, counted without recursion and without looking past `limit`. */
function depthOf(v: unknown, limit: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[v, 1]];
  while (stack.length > 0) {
    const [x, d] = stack.pop()!;
    if (typeof x !== 'object' || x === null) continue;
    deepest = Math.max(deepest, d);
    if (deepest > limit) return deepest;
    for (const child of Object.values(x)) stack.push([child, d + 1]);
  }
  return deepest;
}

/**
 * A copy of `spec` with each node's config patched (plain objects merge key by key; any other
 * value replaces). An override naming a node the graph lacks is refused.
 */
export function applyOverrides(spec: GraphSpec, overrides: Record<string, unknown>): GraphSpec {
  const copy = structuredClone(spec);
  const ids = copy.nodes.map((n) => n.id);
  for (const [nodeId, patch] of Object.entries(overrides)) {
    const node = copy.nodes.find((n) => n.id === nodeId);
    if (!node) {
      throw new BadInputError(
        `override for unknown node "${nodeId}"${didYouMean(nodeId, ids)}; graph "${spec.name}" has nodes: ${listOrNone(ids)}`,
      );
    }
    if (!isPlainObject(patch)) {
      throw new BadInputError(`override for node "${nodeId}" must be an object of config keys, got ${showValue(patch)}`);
    }
    // Copying and merging recurse: a patch a few thousand levels deep would overflow the stack there.
    if (depthOf(patch, MAX_OVERRIDE_DEPTH) > MAX_OVERRIDE_DEPTH) {
      throw new BadInputError(`override for node "${nodeId}" nests deeper than ${MAX_OVERRIDE_DEPTH} levels of objects and arrays`);
    }
    node.config = deepMerge(node.config ?? {}, structuredClone(patch), `override for node "${nodeId}"`);
  }
  return copy;
}

/**
 * `['agent.epsilon=0.2', 'env.opts.size=9']` → `{ agent: { epsilon: 0.2 }, env: { opts: { size: 9 } } }`.
 * The value is JSON when it parses as JSON, else the raw string. Later flags win.
 */
export function parseSetFlags(flags: readonly string[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    const path = (eq < 0 ? flag : flag.slice(0, eq)).split('.');
    if (eq < 0 || path.length < 2 || path.some((p) => p.trim() === '')) {
      throw new BadInputError(`malformed --set "${flag}": expected node.key=value (e.g. agent.epsilon=0.2)`);
    }
    const raw = flag.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // not JSON: keep the string
    }
    for (const k of path) assertSafeKey(k, `--set "${flag}"`);
    const [nodeId, ...keys] = path as [string, ...string[]];
    // Own keys only: "toString" would otherwise find Object.prototype's function and patch that.
    if (!Object.hasOwn(out, nodeId)) out[nodeId] = {};
    let target: Record<string, unknown> = out[nodeId]!;
    for (const k of keys.slice(0, -1)) {
      const next = Object.hasOwn(target, k) ? target[k] : undefined;
      if (isPlainObject(next)) target = next;
      else {
        const made: Record<string, unknown> = {};
        target[k] = made;
        target = made;
      }
    }
    target[keys[keys.length - 1]!] = value;
  }
  return out;
}
