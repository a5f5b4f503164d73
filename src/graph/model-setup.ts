/**
 * The model behind each model-backed node, resolved once at submit: a function whose manifest
 * declares `model` (which config keys name the model, its endpoint and its sampling) has each
 * such key taken from the node's config, else the key's `env` variable, else its `default`. The
 * values are written into the node's config of the frozen graph, so every play of the run (a
 * retry or resume included) asks the same model whatever the environment says later.
 */
import type { GraphSpec, NodeTypeResolver } from '../core/types.js';

/** A sampling parameter's value as frozen: what the config, the environment or the default gave. */
export type SamplingValue = string | number | boolean;

/** What one model-backed node of a run asks: recorded in spec.json and manifest.json, never a key. */
export interface FrozenModel {
  /** The node's id. */
  node: string;
  /** Its type, e.g. `llm__chat`. */
  type: string;
  /** The model name sent. */
  model: string;
  /** The endpoint's base URL, without any user:password part. */
  baseUrl: string;
  /** Each declared sampling parameter that has a value, by config key (unset ones are left out: the endpoint's default). */
  sampling: Record<string, SamplingValue>;
}

export interface ModelSetup {
  /** The graph with every resolved key written into its node's config. */
  graph: GraphSpec;
  models: FrozenModel[];
  /** One line per model-backed node that resolves no model name. */
  missing: string[];
}

/** `url` without credentials: a base URL of the form https://user:secret@host/v1 keeps its secret off the record. */
export function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    if (u.username === '' && u.password === '') return url;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url;
  }
}

const hasCredentials = (url: string): boolean => withoutCredentials(url) !== url;

const isSampling = (v: unknown): v is SamplingValue => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** Resolves the model keys of every model-backed node of a validated graph; nodes of other types are left as they are. */
export function resolveModels(graph: GraphSpec, resolver: NodeTypeResolver, env: NodeJS.ProcessEnv = process.env): ModelSetup {
  const models: FrozenModel[] = [];
  const missing: string[] = [];
  const nodes = graph.nodes.map((node) => {
    const fn = resolver.resolve(node.type)?.fn;
    const keys = fn?.model;
    if (!fn || !keys) return node;
    const config: Record<string, unknown> = { ...node.config };
    const resolved = (key: string): unknown => {
      const own = config[key];
      if (own !== undefined && own !== null && own !== '') return own;
      const decl = fn.config?.[key];
      const fromEnv = decl?.env ? env[decl.env] : undefined;
      if (fromEnv) {
        // A URL with a password stays in the environment: the run's files hold no secret.
        if (!hasCredentials(fromEnv)) config[key] = fromEnv;
        return fromEnv;
      }
      if (decl?.default !== undefined) config[key] = decl.default;
      return decl?.default;
    };
    const model = resolved(keys.name);
    const endpoint = resolved(keys.endpoint);
    const sampling: Record<string, SamplingValue> = {};
    for (const key of keys.sampling) {
      const v = resolved(key);
      if (isSampling(v)) sampling[key] = v;
    }
    if (typeof model !== 'string' || model === '') {
      const variable = fn.config?.[keys.name]?.env;
      missing.push(
        `node "${node.id}" (${node.type}) names no model: set config ${keys.name} (--set ${node.id}.${keys.name}=NAME)${variable ? ` or ${variable} in the server's environment` : ''}`,
      );
      return node;
    }
    models.push({
      node: node.id,
      type: node.type,
      model,
      baseUrl: typeof endpoint === 'string' ? withoutCredentials(endpoint.replace(/\/+$/, '')) : '',
      sampling,
    });
    return { ...node, config };
  });
  return { graph: models.length === 0 ? graph : { ...graph, nodes }, models, missing };
}
