/**
 * The operator's rules for what a run may ask, checked by `assertRunPolicy` at every submit:
 * a config key a nodeset declares `operatorOnly` is set in graph files only, never by a run's
 * overrides; a `knownEndpoint` key (a model's `base_url`) may only name an endpoint the server
 * knows; and a graph that offers code-running tools (python, command tools) runs only where the
 * operator switched them on.
 */
import { RunPolicyError } from '../errors.js';
import { showValue } from '../core/show-value.js';
import type { FunctionSpec, GraphSpec } from '../core/types.js';
import { DEFAULT_BASE_URL } from '../nodesets/llm/llm-config.js';
import { codeToolsOf } from '../nodesets/tools/tool-set.js';

/** Set to 1 (or true) in the server's environment: code-running tools may run (as `--allow-code-tools`). */
export const ALLOW_CODE_TOOLS_ENV = 'EVAL_ALLOW_CODE_TOOLS';
/** Comma-separated base URLs a run's overrides may name besides the server's configured one. */
export const LLM_ENDPOINTS_ENV = 'EVAL_LLM_ENDPOINTS';

export interface RunPolicy {
  /** Code-running tools (the python built-in, command tools) may run. @default false */
  allowCodeTools: boolean;
  /** Base URLs a run's overrides may name, normalised (normaliseEndpoint). */
  endpoints: readonly string[];
}

/** Node types whose config offers code-running tools, and how to list them. */
const CODE_TOOL_NODES: Readonly<Record<string, (config: Record<string, unknown>) => string[]>> = {
  tools__run: codeToolsOf,
};

/** A base URL as compared: scheme and host lower-cased (URL's own form), no trailing slash. */
export function normaliseEndpoint(url: string): string {
  const trimmed = url.trim();
  try {
    const u = new URL(trimmed);
    const auth = u.username || u.password ? `${u.username}:${u.password}@` : '';
    return `${u.protocol}//${auth}${u.host}${u.pathname.replace(/\/+$/, '')}${u.search}${u.hash}`;
  } catch {
    return trimmed.replace(/\/+$/, '');
  }
}

/**
 * The policy of this process's environment: the configured endpoint (OPENAI_BASE_URL, else the
 * OpenAI default) plus EVAL_LLM_ENDPOINTS, and code-running tools when EVAL_ALLOW_CODE_TOOLS is 1
 * or `allowCodeTools` (a `--allow-code-tools` flag) says so.
 */
export function runPolicyFromEnv(env: NodeJS.ProcessEnv = process.env, o: { allowCodeTools?: boolean | undefined } = {}): RunPolicy {
  const extra = (env[LLM_ENDPOINTS_ENV] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const flag = (env[ALLOW_CODE_TOOLS_ENV] ?? '').trim().toLowerCase();
  return {
    allowCodeTools: o.allowCodeTools === true || flag === '1' || flag === 'true',
    endpoints: [...new Set([env.OPENAI_BASE_URL || DEFAULT_BASE_URL, ...extra].map(normaliseEndpoint))],
  };
}

/** The code-running tools a graph offers, as "node.tool". */
export function codeToolsOfGraph(graph: GraphSpec): string[] {
  return graph.nodes.flatMap((n) =>
    (Object.hasOwn(CODE_TOOL_NODES, n.type) ? CODE_TOOL_NODES[n.type]!(n.config ?? {}) : []).map((t) => `${n.id}.${t}`),
  );
}

/** How a message names an override key: `overrides.node.key`, `--set node.key`, `overrides.node.key (run.toml line 4)`. */
function labelled(label: string, path: string): string {
  const space = label.indexOf(' ');
  const head = space < 0 ? label : label.slice(0, space);
  const tail = space < 0 ? '' : label.slice(space);
  return `${head === '--set' ? '--set ' : `${head}.`}${path}${tail}`;
}

export interface RunPolicyInput {
  /** The run's graph, overrides applied. */
  graph: GraphSpec;
  /** The run's overrides (node id → patch), as submitted. */
  overrides?: Readonly<Record<string, Record<string, unknown>>> | undefined;
  /** The declaration of a node type's function, for its config keys. */
  functionOf: (type: string) => FunctionSpec | undefined;
  policy: RunPolicy;
  /** How the error names the overrides (`--set`, a run file's line). @default "overrides" */
  label?: string | undefined;
}

/**
 * Refuses what the operator did not allow, naming the field: OVERRIDE_NOT_ALLOWED,
 * ENDPOINT_NOT_ALLOWED, CODE_TOOLS_DISABLED. Returns the code-running tools the graph offers
 * ("node.tool"; empty for none), which the run records.
 */
export function assertRunPolicy(input: RunPolicyInput): string[] {
  const label = input.label ?? 'overrides';
  const nodes = new Map(input.graph.nodes.map((n) => [n.id, n]));
  for (const [nodeId, patch] of Object.entries(input.overrides ?? {})) {
    const node = nodes.get(nodeId);
    const keys = node ? input.functionOf(node.type)?.config : undefined;
    if (!node || !keys) continue;
    for (const [key, value] of Object.entries(patch)) {
      const decl = Object.hasOwn(keys, key) ? keys[key] : undefined;
      const field = `overrides.${nodeId}.${key}`;
      const named = labelled(label, `${nodeId}.${key}`);
      if (decl?.operatorOnly === true) {
        throw new RunPolicyError(
          'OVERRIDE_NOT_ALLOWED',
          `${named}: "${key}" of ${node.type} is set by the server's operator in a graph file (graphs/ or the workspace), never by a run's overrides`,
          field,
        );
      }
      if (
        decl?.knownEndpoint === true &&
        typeof value === 'string' &&
        value !== '' &&
        !input.policy.endpoints.includes(normaliseEndpoint(value))
      ) {
        throw new RunPolicyError(
          'ENDPOINT_NOT_ALLOWED',
          `${named}: ${showValue(value)} is not an endpoint this server knows; a run may name the server's configured endpoint (OPENAI_BASE_URL) or one its operator lists in ${LLM_ENDPOINTS_ENV}`,
          field,
        );
      }
    }
  }
  const codeTools = codeToolsOfGraph(input.graph);
  if (codeTools.length > 0 && !input.policy.allowCodeTools) {
    const nodeId = codeTools[0]!.slice(0, codeTools[0]!.indexOf('.'));
    const patch = input.overrides?.[nodeId];
    const key = patch && Object.hasOwn(patch, 'builtins') ? 'builtins' : patch && Object.hasOwn(patch, 'tools') ? 'tools' : undefined;
    const field = key ? `overrides.${nodeId}.${key}` : 'graphName';
    throw new RunPolicyError(
      'CODE_TOOLS_DISABLED',
      `${key ? labelled(label, `${nodeId}.${key}`) : 'graphName'}: graph "${input.graph.name}" offers code-running tools (${codeTools.join(', ')}), which run only where the operator allows them: evalctl serve --allow-code-tools (or evalctl run --allow-code-tools, or ${ALLOW_CODE_TOOLS_ENV}=1)`,
      field,
    );
  }
  return codeTools;
}
