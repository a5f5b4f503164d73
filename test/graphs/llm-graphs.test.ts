/**
 * The model-backed example graphs fit the nodesets they name: every node type, port and config
 * key exists, and react_llm shows its model the same calculator the tool node runs.
 */
import { sandboxToolDeclarations, sandboxToolsOf } from '../../src/nodesets/sandbox/sandbox-tools.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseGraph, validateGraph } from '../../src/graph/graph.js';
import { parseManifest } from '../../src/nodeset-registry/manifest.js';
import type { GraphSpec, NodesetManifest, NodeTypeResolver, ResolvedNodeType } from '../../src/core/types.js';
import { openAiTools, toolSet } from '../../src/nodesets/tools/tool-set.js';

const nodesetsDir = fileURLToPath(new URL('../../src/nodesets/', import.meta.url));
const graphsDir = fileURLToPath(new URL('../../graphs/', import.meta.url));
const NODESETS = ['env_dataset', 'llm', 'score', 'tools', 'sandbox'];
const GRAPHS = ['qa_llm', 'qa_llm_mcq', 'qa_llm_labels', 'react_llm', 'agent_sandbox'];

async function resolver(): Promise<NodeTypeResolver> {
  const manifests: NodesetManifest[] = await Promise.all(
    NODESETS.map(async (name) => parseManifest(JSON.parse(await readFile(join(nodesetsDir, name, 'manifest.json'), 'utf8')), name)),
  );
  const types = new Map<string, ResolvedNodeType>();
  for (const m of manifests) {
    for (const fn of m.functions) {
      const type = `${m.name}__${fn.name}`;
      types.set(type, { type, nodeset: m.name, fn, invoke: () => Promise.reject(new Error('not called here')) });
    }
  }
  return { resolve: (t) => types.get(t), knownTypes: () => [...types.keys()] };
}

const graph = async (name: string): Promise<GraphSpec> =>
  parseGraph(JSON.parse(await readFile(join(graphsDir, `${name}.json`), 'utf8')), `${name}.json`);

describe('model-backed example graphs', () => {
  it('validate against the built-in nodesets, with a description and a step budget', async () => {
    const r = await resolver();
    for (const name of GRAPHS) {
      const spec = await graph(name);
      expect(spec.name).toBe(name);
      expect(spec.description?.length).toBeGreaterThan(20);
      expect(spec.step_budget).toBeGreaterThan(0);
      expect(() => validateGraph(spec, r), name).not.toThrow();
    }
  });

  it('react_llm loops the tool results back into the model and offers it exactly the tools the tool node runs', async () => {
    const spec = await graph('react_llm');
    expect(spec.edges).toContainEqual({ from: 'llm.tool_calls', to: 'tools.tool_calls' });
    expect(spec.edges).toContainEqual({ from: 'tools.tool_results', to: 'llm.tool_results', loop: true });
    const llm = spec.nodes.find((n) => n.id === 'llm')!;
    const tools = spec.nodes.find((n) => n.id === 'tools')!;
    expect(llm.config?.tools).toEqual(openAiTools(toolSet(tools.config ?? {})));
    // The loop must end before the graph's budget: the model's call budget runs out first.
    expect(spec.step_budget).toBeGreaterThan(llm.config?.max_llm_calls as number);
  });

  it('agent_sandbox offers the model exactly the tools its sandbox node runs, the sample reaching the sandbox and the check', async () => {
    const spec = await graph('agent_sandbox');
    const llm = spec.nodes.find((n) => n.id === 'llm')!;
    const tools = spec.nodes.find((n) => n.id === 'tools')!;
    expect(llm.config?.tools).toEqual(sandboxToolDeclarations(sandboxToolsOf(tools.config ?? {})));
    expect(spec.edges).toContainEqual({ from: 'env.sample', to: 'tools.sample' });
    expect(spec.edges).toContainEqual({ from: 'env.sample', to: 'check.sample' });
    expect(spec.step_budget).toBeGreaterThan(llm.config?.max_llm_calls as number);
  });
});
