/**
 * The operator's rules over a run's overrides, against the real built-in manifests: operator-only
 * keys (a tool's command), endpoints the server knows (normalised), and code-running tools behind
 * the switch. Each refusal is coded and names the field.
 */
import { describe, expect, it } from 'vitest';
import type { GraphSpec } from '../../src/core/types.js';
import { RunPolicyError } from '../../src/errors.js';
import { applyOverrides } from '../../src/graph/graph.js';
import { parseManifest } from '../../src/nodeset-registry/manifest.js';
import { NodesetRegistry } from '../../src/nodeset-registry/registry.js';
import { BUILTIN_NODESETS_DIR } from '../../src/paths.js';
import { assertRunPolicy, normaliseEndpoint, runPolicyFromEnv, type RunPolicy } from '../../src/spec/run-policy.js';

const graph: GraphSpec = {
  name: 'agent',
  nodes: [
    { id: 'llm', type: 'llm__chat', config: { model: 'm' } },
    { id: 'tools', type: 'tools__run', config: { builtins: ['calculator'] } },
    { id: 'judge', type: 'llm__judge', config: { base_url: 'http://operator.example/v1' } },
  ],
  edges: [],
};

const registry = await NodesetRegistry.scan({ builtinDir: BUILTIN_NODESETS_DIR });
const known = 'http://127.0.0.1:8000/v1';

function check(overrides: Record<string, Record<string, unknown>>, policy: Partial<RunPolicy> = {}, g = graph): string[] {
  return assertRunPolicy({
    graph: applyOverrides(g, overrides),
    overrides,
    functionOf: (type) => registry.resolve(type)?.fn,
    policy: { allowCodeTools: false, endpoints: [known], ...policy },
  });
}

function refusal(fn: () => unknown): { code: string; field: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof RunPolicyError) return { code: err.code, field: err.field, message: err.message };
    throw err;
  }
  throw new Error('not refused');
}

describe('assertRunPolicy', () => {
  it('refuses a command tool from overrides, with or without the switch: OVERRIDE_NOT_ALLOWED naming overrides.tools.tools', () => {
    const sh = { tools: { tools: { sh: { command: ['sh', '-c', 'id > marker'] } } } };
    for (const allowCodeTools of [false, true]) {
      expect(refusal(() => check(sh, { allowCodeTools }))).toMatchObject({ code: 'OVERRIDE_NOT_ALLOWED', field: 'overrides.tools.tools' });
    }
    // As the CLI names it.
    expect(
      refusal(() =>
        assertRunPolicy({
          graph: applyOverrides(graph, sh),
          overrides: sh,
          functionOf: (t) => registry.resolve(t)?.fn,
          policy: { allowCodeTools: true, endpoints: [] },
          label: '--set',
        }),
      ).message,
    ).toMatch(/^--set tools\.tools: /);
  });

  it('takes a base_url the server knows, trailing slash and host case aside; refuses another: ENDPOINT_NOT_ALLOWED', () => {
    expect(check({ llm: { base_url: 'http://127.0.0.1:8000/v1/' } })).toEqual([]);
    expect(check({ llm: { base_url: 'HTTP://127.0.0.1:8000/v1//' }, judge: { base_url: known } })).toEqual([]);
    for (const url of ['http://127.0.0.1:8001/v1', 'http://evil.example/v1', 'http://x@127.0.0.1:8000/v1', 'http://127.0.0.1:8000/v1/x']) {
      expect(refusal(() => check({ llm: { base_url: url } }))).toMatchObject({
        code: 'ENDPOINT_NOT_ALLOWED',
        field: 'overrides.llm.base_url',
      });
    }
    expect(refusal(() => check({ judge: { base_url: 'http://evil.example/v1' } }))).toMatchObject({ field: 'overrides.judge.base_url' });
    // The graph file's own base_url is the operator's: not an override, not checked.
    expect(check({ judge: { rubric: 'same number' } })).toEqual([]);
  });

  it('refuses python without the switch (CODE_TOOLS_DISABLED naming overrides.tools.builtins) and lists it with the switch', () => {
    const python = { tools: { builtins: ['calculator', 'python'] } };
    expect(refusal(() => check(python))).toMatchObject({ code: 'CODE_TOOLS_DISABLED', field: 'overrides.tools.builtins' });
    expect(check(python, { allowCodeTools: true })).toEqual(['tools.python']);
    // A command tool the graph file defines: the operator put it there, the switch still decides.
    const withSh: GraphSpec = {
      ...graph,
      nodes: graph.nodes.map((n) => (n.id === 'tools' ? { ...n, config: { tools: { sh: { command: ['sh'] } } } } : n)),
    };
    expect(refusal(() => check({}, {}, withSh))).toMatchObject({ code: 'CODE_TOOLS_DISABLED', field: 'graphName' });
    expect(check({ tools: { timeout_ms: 500 } }, { allowCodeTools: true }, withSh)).toEqual(['tools.sh']);
    // Bounded parameters and the choice among registered non-code tools stay the run's.
    expect(check({ tools: { builtins: ['read_file'], timeout_ms: 100, max_output_chars: 10 } })).toEqual([]);
  });
});

describe('runPolicyFromEnv', () => {
  it('knows OPENAI_BASE_URL (else the OpenAI default) and EVAL_LLM_ENDPOINTS; the switch comes from the flag or EVAL_ALLOW_CODE_TOOLS', () => {
    expect(runPolicyFromEnv({})).toEqual({ allowCodeTools: false, endpoints: ['https://api.openai.com/v1'] });
    expect(
      runPolicyFromEnv({
        OPENAI_BASE_URL: 'http://a:1/v1/',
        EVAL_LLM_ENDPOINTS: ' http://b:2/v1 ,, http://a:1/v1',
        EVAL_ALLOW_CODE_TOOLS: '1',
      }),
    ).toEqual({
      allowCodeTools: true,
      endpoints: ['http://a:1/v1', 'http://b:2/v1'],
    });
    expect(runPolicyFromEnv({ EVAL_ALLOW_CODE_TOOLS: '0' }, { allowCodeTools: true }).allowCodeTools).toBe(true);
    expect(normaliseEndpoint('https://API.openai.com:443/v1/')).toBe('https://api.openai.com/v1');
  });
});

describe('manifest config keys', () => {
  it('declare operatorOnly and knownEndpoint as booleans; the built-ins mark tools.run.tools and the base_url of llm__chat and llm__judge', () => {
    const fn = (operatorOnly: unknown) => ({
      name: 'x',
      parallelism: 'shared',
      module: 'm.js',
      functions: [{ name: 'f', inputs: [], outputs: [], config: { cmd: { type: 'array', operatorOnly } } }],
    });
    expect(parseManifest(fn(true), 'm.json').functions[0]!.config!.cmd!.operatorOnly).toBe(true);
    expect(() => parseManifest(fn('yes'), 'm.json')).toThrow(/functions\[0\]\.config\.cmd\.operatorOnly/);
    expect(registry.resolve('tools__run')?.fn.config?.tools?.operatorOnly).toBe(true);
    expect(registry.resolve('llm__chat')?.fn.config?.base_url?.knownEndpoint).toBe(true);
    expect(registry.resolve('llm__judge')?.fn.config?.base_url?.knownEndpoint).toBe(true);
  });
});
