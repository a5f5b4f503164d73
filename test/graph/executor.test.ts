import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BadInputError, ConflictError, HostDiedError } from '../../src/errors.js';
import { GraphExecutor, type ExecutorAsset, type GraphExecutorOptions, type StepEvent } from '../../src/graph/executor.js';
import { ERROR_MESSAGE_LIMIT } from '../../src/graph/firing-summary.js';
import { validateGraph } from '../../src/graph/graph.js';
import { LoopRunner } from '../../src/graph/loop-runner.js';
import { createPrng } from '../../src/core/prng.js';
import type { FiringLogEntry, GraphSpec, NodeCallArgs } from '../../src/core/types.js';
import { memoryResolver, type MemoryFunction } from '../fixtures/memory-resolver.js';

const context = { runSeed: 7, episodeIndex: 3, seed: 1234, episodeKey: 'run:3' };

/** A counter env: position advances by the action it receives (1 when none), done at `goal`. */
function counterEnv(goal = Infinity): MemoryFunction {
  return {
    inputs: ['action?'],
    outputs: ['position', 'done', 'metrics'],
    config: { start: {} },
    run: ({ inputs, ctx, config }) => {
      const start = typeof config.start === 'number' ? config.start : 0;
      const position = start + (ctx.step + 1) * (typeof inputs.action === 'number' ? inputs.action : 1);
      return { position, done: position >= goal, metrics: { position, step: ctx.step, reached: position >= goal } };
    },
  };
}

const baseGraph = (): GraphSpec => ({
  name: 'counter',
  nodes: [
    { id: 'env', type: 'env__step' },
    { id: 'agent', type: 'agent__act' },
    { id: 'result', type: 'graphOut' },
  ],
  edges: [
    { from: 'env.position', to: 'agent.observation' },
    { from: 'agent.action', to: 'env.action', loop: true },
    { from: 'env.metrics', to: 'result.metrics' },
  ],
});

function executor(
  spec: GraphSpec,
  fns: Record<string, Record<string, MemoryFunction>>,
  opts: Partial<GraphExecutorOptions> = {},
): { exec: GraphExecutor; firings: FiringLogEntry[]; resolver: ReturnType<typeof memoryResolver> } {
  const resolver = memoryResolver(fns);
  const firings: FiringLogEntry[] = [];
  const exec = new GraphExecutor({
    graph: validateGraph(spec, resolver),
    stepBudget: 10,
    context,
    onFiring: (e) => firings.push(e),
    ...opts,
  });
  return { exec, firings, resolver };
}

const agentDoubling: MemoryFunction = {
  inputs: ['observation'],
  outputs: ['action'],
  run: () => ({ action: 2 }),
};

describe('GraphExecutor', () => {
  it('fires every node once per iteration in dependency order, with step, step budget, node id, seed and config', async () => {
    const calls: string[] = [];
    const seen: NodeCallArgs[] = [];
    const spec = baseGraph();
    spec.nodes.reverse(); // declaration order must not matter
    spec.nodes.find((n) => n.id === 'env')!.config = { start: 100 };
    const { exec } = executor(
      spec,
      {
        env: { step: { ...counterEnv(), run: (a) => (calls.push(`env@${a.ctx.step}`), seen.push(a), counterEnv().run!(a)) } },
        agent: { act: { ...agentDoubling, run: (a) => (calls.push(`agent@${a.ctx.step}`), { action: 2 }) } },
      },
      { stepBudget: 3 },
    );
    const r = await exec.run();
    expect(calls).toEqual(['env@0', 'agent@0', 'env@1', 'agent@1', 'env@2', 'agent@2']);
    expect(seen[0]!.ctx).toEqual({ ...context, step: 0, stepBudget: 3, nodeId: 'env' });
    expect(seen[0]!.config).toEqual({ start: 100 });
    expect(r.steps).toBe(3);
  });

  it('delivers a loop edge value in the next iteration only (absent at iteration 0)', async () => {
    const actions: unknown[] = [];
    let n = 0;
    const { exec } = executor(
      baseGraph(),
      {
        env: { step: { ...counterEnv(), run: (a) => (actions.push(a.inputs.action), counterEnv().run!(a)) } },
        agent: { act: { ...agentDoubling, run: () => ({ action: 10 + n++ }) } },
      },
      { stepBudget: 4 },
    );
    await exec.run();
    expect(actions).toEqual([undefined, 10, 11, 12]);
  });

  it('ends after the iteration in which a node outputs done: true (completed)', async () => {
    const { exec } = executor(baseGraph(), { env: { step: counterEnv(5) }, agent: { act: agentDoubling } }, { stepBudget: 50 });
    const r = await exec.run();
    // positions: 1, 4, 6 → done at step 2
    expect(r).toMatchObject({ ending: 'completed', steps: 3, metrics: { position: 6, step: 2, reached: true }, nodeErrors: [] });
  });

  it('stops at the step budget (budget_exhausted) with the last metrics', async () => {
    const { exec } = executor(baseGraph(), { env: { step: counterEnv() }, agent: { act: agentDoubling } }, { stepBudget: 4 });
    const r = await exec.run();
    expect(r.ending).toBe('budget_exhausted');
    expect(r.steps).toBe(4);
    expect(r.metrics).toEqual({ position: 8, step: 3, reached: false });
    // The record says which budget ran out, as a node's own budget does.
    expect(r.error).toBe('the step budget of 4 step(s) ran out before any node said done');
  });

  it('refuses a step budget that is not a positive integer, and a second run', async () => {
    const fns = { env: { step: counterEnv() }, agent: { act: agentDoubling } };
    for (const b of [0, -1, 1.5, Number.NaN]) {
      expect(() => executor(baseGraph(), fns, { stepBudget: b })).toThrow(BadInputError);
    }
    const { exec } = executor(baseGraph(), fns, { stepBudget: 1 });
    await exec.run();
    await expect(exec.run()).rejects.toThrow(ConflictError);
  });

  it('cuts a node error message that quotes a large value, so no episode keeps a copy of it', async () => {
    const full = `config epsilon must be a number, got "${'x'.repeat(1024 * 1024)}"`;
    const { exec, firings } = executor(baseGraph(), {
      env: { step: counterEnv() },
      agent: {
        act: {
          ...agentDoubling,
          run: () => {
            throw new Error(full);
          },
        },
      },
    });
    const r = await exec.run();
    expect(r.ending).toBe('error');
    const message = r.nodeErrors[0]!.message;
    expect(message === `${full.slice(0, ERROR_MESSAGE_LIMIT)}… (${full.length - ERROR_MESSAGE_LIMIT} more characters)`).toBe(true);
    expect(firings.find((f) => f.error)?.error).toBe(message);
    expect(r.error!.length).toBeLessThan(ERROR_MESSAGE_LIMIT + 100);
  });

  it('puts a throwing node in the error ledger, skips its dependents, fires the rest, ends the episode with error', async () => {
    const fired: string[] = [];
    const spec: GraphSpec = {
      name: 'errors',
      nodes: [
        { id: 'env', type: 'env__step' },
        { id: 'agent', type: 'agent__act' },
        { id: 'critic', type: 'agent__critic' },
        { id: 'side', type: 'agent__side' },
        { id: 'result', type: 'graphOut' },
      ],
      edges: [
        { from: 'env.position', to: 'agent.observation' },
        { from: 'agent.action', to: 'critic.action' },
        { from: 'agent.action', to: 'env.action', loop: true },
        { from: 'env.metrics', to: 'result.metrics' },
        { from: 'critic.score', to: 'result.score' },
        { from: 'side.value', to: 'result.side' },
      ],
    };
    const { exec, firings } = executor(
      spec,
      {
        env: { step: counterEnv() },
        agent: {
          act: {
            ...agentDoubling,
            run: ({ ctx }) => {
              fired.push(`agent@${ctx.step}`);
              if (ctx.step === 2) throw new Error('policy exploded');
              return { action: 1 };
            },
          },
          critic: { inputs: ['action'], outputs: ['score'], run: ({ ctx }) => (fired.push(`critic@${ctx.step}`), { score: ctx.step }) },
          side: { outputs: ['value'], run: ({ ctx }) => (fired.push(`side@${ctx.step}`), { value: ctx.step * 10 }) },
        },
      },
      { stepBudget: 10 },
    );
    const r = await exec.run();
    expect(r.ending).toBe('error');
    expect(r.steps).toBe(3);
    expect(r.nodeErrors).toEqual([{ nodeId: 'agent', step: 2, message: 'policy exploded' }]);
    expect(r.error).toContain('node "agent" failed at step 2: policy exploded');
    expect(fired.filter((f) => f.endsWith('@2')).sort()).toEqual(['agent@2', 'side@2']);
    // The sink keeps what reached it: env's metrics and side of step 2, the critic's score of step 1.
    expect(r.metrics).toEqual({ position: 3, step: 2, reached: false, score: 1, side: 20 });
    expect(firings.filter((f) => f.step === 2).map((f) => [f.nodeId, f.error])).toEqual([
      ['env', undefined],
      ['agent', 'policy exploded'],
      ['side', undefined],
    ]);
  });

  it('treats a returned { error } as a node error unless the function declares an error port', async () => {
    const spec: GraphSpec = {
      name: 'e',
      nodes: [
        { id: 'a', type: 'n__bad' },
        { id: 'b', type: 'n__reporting' },
        { id: 'out', type: 'graphOut' },
      ],
      edges: [
        { from: 'a.x', to: 'out.x' },
        { from: 'b.error', to: 'out.b_error' },
      ],
    };
    const { exec } = executor(spec, {
      n: {
        bad: { outputs: ['x'], run: () => ({ error: 'no such episode' }) },
        reporting: { outputs: ['error'], run: () => ({ error: 'fine, just a string output' }) },
      },
    });
    const r = await exec.run();
    expect(r.ending).toBe('error');
    expect(r.nodeErrors).toEqual([{ nodeId: 'a', step: 0, message: 'no such episode' }]);
    expect(r.metrics).toEqual({ b_error: 'fine, just a string output' });
  });

  it('names a node that returns something other than an object of outputs', async () => {
    const spec: GraphSpec = {
      name: 'n',
      nodes: [
        { id: 'a', type: 'n__f' },
        { id: 'out', type: 'graphOut' },
      ],
      edges: [],
    };
    const { exec } = executor(spec, { n: { f: { run: () => 42 as never } } });
    const r = await exec.run();
    expect(r.nodeErrors).toEqual([{ nodeId: 'a', step: 0, message: 'returned number instead of an object of outputs' }]);
  });

  it('stops at once on abort, passes the signal to the node, and keeps the partial metrics', async () => {
    const ac = new AbortController();
    let signalSeen: AbortSignal | undefined;
    const { exec } = executor(
      baseGraph(),
      {
        env: { step: counterEnv() },
        agent: {
          act: {
            ...agentDoubling,
            run: async ({ ctx, signal }) => {
              if (ctx.step === 3) {
                signalSeen = signal;
                setTimeout(() => ac.abort(new Error('episode 3 passed its wall-clock limit')), 5);
                await sleep(10_000); // ignores the signal: the executor must not wait for it
              }
              return { action: 1 };
            },
          },
        },
      },
      { stepBudget: 100, signal: ac.signal },
    );
    const t0 = Date.now();
    const r = await exec.run();
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(r.ending).toBe('aborted');
    expect(r.error).toBe('episode 3 passed its wall-clock limit');
    expect(r.steps).toBe(3);
    // env already ran in step 3 before the abort, so its step-3 metrics reached the sink.
    expect(r.metrics).toEqual({ position: 4, step: 3, reached: false });
    expect(signalSeen?.aborted).toBe(true);
  });

  it('ends aborted with zero steps when the signal is already aborted', async () => {
    const { exec } = executor(
      baseGraph(),
      { env: { step: counterEnv() }, agent: { act: agentDoubling } },
      {
        signal: AbortSignal.abort(new Error('cancelled')),
      },
    );
    expect(await exec.run()).toMatchObject({ ending: 'aborted', steps: 0, metrics: {}, error: 'cancelled' });
  });

  it('lets a wall-clock limit interrupt a graph of only in-process nodes', async () => {
    const { exec } = executor(
      baseGraph(),
      { env: { step: counterEnv() }, agent: { act: agentDoubling } },
      {
        stepBudget: 1_000_000_000,
        signal: AbortSignal.timeout(100),
        onFiring: undefined,
      },
    );
    const r = await exec.run();
    expect(r.ending).toBe('aborted');
    expect(r.steps).toBeGreaterThan(10);
    expect(r.metrics.step).toBeGreaterThanOrEqual(r.steps - 1);
  });

  it('ends crashed at once when a host dies, naming the node, with partial metrics', async () => {
    let otherSignal: AbortSignal | undefined;
    const spec = baseGraph();
    spec.nodes.push({ id: 'slow', type: 'agent__slow' });
    const { exec } = executor(
      spec,
      {
        env: {
          step: {
            ...counterEnv(),
            run: (a) => {
              if (a.ctx.step === 2) throw new HostDiedError('env_gridnav#1 exited with signal SIGKILL');
              return counterEnv().run!(a);
            },
          },
        },
        agent: {
          act: agentDoubling,
          slow: {
            run: async ({ ctx, signal }) => {
              if (ctx.step === 2) {
                otherSignal = signal;
                await sleep(10_000);
              }
              return {};
            },
          },
        },
      },
      { stepBudget: 10 },
    );
    const t0 = Date.now();
    const r = await exec.run();
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(r.ending).toBe('crashed');
    expect(r.error).toBe('node "env" (env__step): env_gridnav#1 exited with signal SIGKILL');
    expect(r.steps).toBe(2);
    expect(r.metrics).toEqual({ position: 4, step: 1, reached: false });
    expect(otherSignal?.aborted).toBe(true);
    expect(r.nodeErrors).toEqual([]);
  });

  it('flattens a metrics object (scalars only) and keeps other scalar ports by name, over several graphOuts', async () => {
    const spec: GraphSpec = {
      name: 'm',
      nodes: [
        { id: 'src', type: 'n__src' },
        { id: 'a', type: 'graphOut' },
        { id: 'b', type: 'graphOut' },
      ],
      edges: [
        { from: 'src.metrics', to: 'a.metrics' },
        { from: 'src.success', to: 'a.success' },
        { from: 'src.blob', to: 'a.blob' },
        { from: 'src.label', to: 'b.label' },
        { from: 'src.count', to: 'b.metrics' },
      ],
    };
    const { exec } = executor(
      spec,
      {
        n: {
          src: {
            outputs: ['metrics', 'success', 'blob', 'label', 'count'],
            run: () => ({
              metrics: { spl: 0.5, name: 'x', ok: true, nested: { a: 1 }, list: [1], nan: Number.NaN, nil: null },
              success: 1,
              blob: { not: 'a scalar' },
              label: 'maze-3',
              count: 4,
            }),
          },
        },
      },
      { stepBudget: 1 },
    );
    const r = await exec.run();
    expect(r.metrics).toEqual({ spl: 0.5, name: 'x', ok: true, success: 1, label: 'maze-3', metrics: 4 });
    expect(Object.keys(r.metrics)).toEqual(['spl', 'name', 'ok', 'success', 'label', 'metrics']);
  });

  it('hands assets out with unique names and passes references downstream and in the log', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const assets: ExecutorAsset[] = [];
    const received: unknown[] = [];
    const spec: GraphSpec = {
      name: 'a',
      nodes: [
        { id: 'env', type: 'n__render' },
        { id: 'viewer', type: 'n__view' },
        { id: 'out', type: 'graphOut' },
      ],
      edges: [
        { from: 'env.image', to: 'viewer.image' },
        { from: 'env.image', to: 'out.image' },
        { from: 'env.done', to: 'out.done' },
      ],
    };
    const { exec, firings } = executor(
      spec,
      {
        n: {
          render: {
            outputs: ['image', 'done'],
            run: ({ ctx }) => ({
              image: { $asset: { name: '../trajectory.png', mime: 'image/png', data: png.toString('base64') } },
              done: ctx.step === 2,
            }),
          },
          view: { inputs: ['image'], run: ({ inputs }) => (received.push(inputs.image), {}) },
        },
      },
      {
        onAsset: async (a) => {
          await sleep(1);
          assets.push(a);
        },
      },
    );
    const r = await exec.run();
    const names = ['env_trajectory.png', 's0001_env_trajectory.png', 's0002_env_trajectory.png'];
    expect(assets.map((a) => [a.name, a.mime, a.nodeId, a.step])).toEqual(names.map((n, i) => [n, 'image/png', 'env', i]));
    expect(assets[0]!.data.equals(png)).toBe(true);
    expect(received).toEqual(names.map((name) => ({ $assetRef: name })));
    expect(r.assets).toEqual(names.map((name, step) => ({ name, mime: 'image/png', bytes: png.length, nodeId: 'env', step })));
    expect(firings.find((f) => f.nodeId === 'env')!.outputs).toEqual({ image: { $assetRef: names[0] }, done: false });
    expect(JSON.stringify(firings)).not.toContain(png.toString('base64'));
  });

  it('ends with error when an asset cannot be stored, naming the node', async () => {
    const spec: GraphSpec = {
      name: 'a',
      nodes: [
        { id: 'env', type: 'n__r' },
        { id: 'out', type: 'graphOut' },
      ],
      edges: [],
    };
    const { exec } = executor(
      spec,
      { n: { r: { outputs: ['img'], run: () => ({ img: { $asset: { name: 'x.png', mime: 'image/png', data: 'AA==' } } }) } } },
      { onAsset: () => Promise.reject(new Error('ENOSPC: no space left on device')) },
    );
    const r = await exec.run();
    expect(r.ending).toBe('error');
    expect(r.nodeErrors[0]).toMatchObject({ nodeId: 'env', message: expect.stringContaining('ENOSPC') });
  });

  it('logs one entry per firing in topological order, eliding values over ~2 KB', async () => {
    const spec = baseGraph();
    const { exec, firings } = executor(
      spec,
      {
        env: {
          step: {
            ...counterEnv(),
            outputs: [...counterEnv().outputs!, 'frame'],
            run: (a) => ({ ...(counterEnv().run!(a) as object), frame: new Array(5000).fill(7) }),
          },
        },
        agent: { act: agentDoubling },
      },
      { stepBudget: 2 },
    );
    await exec.run();
    expect(firings.map((f) => `${f.step}:${f.nodeId}:${f.type}`)).toEqual([
      '0:env:env__step',
      '0:agent:agent__act',
      '0:result:graphOut',
      '1:env:env__step',
      '1:agent:agent__act',
      '1:result:graphOut',
    ]);
    const env1 = firings[3]!;
    expect(env1.inputs).toEqual({ action: 2 });
    expect(env1.outputs).toMatchObject({ position: 4, done: false, frame: { $elided: 'array', length: 5000 } });
    expect(typeof env1.ms).toBe('number');
    expect(firings[2]!.inputs).toEqual({ metrics: { position: 1, step: 0, reached: false } });
    expect(JSON.stringify(firings).length).toBeLessThan(3_000);
  });

  it('fires independent ready nodes concurrently, and the outcome does not depend on their timing', async () => {
    const spec: GraphSpec = {
      name: 'fan',
      nodes: [
        { id: 'src', type: 'n__src' },
        { id: 'left', type: 'n__work' },
        { id: 'right', type: 'n__work' },
        { id: 'join', type: 'n__join' },
        { id: 'out', type: 'graphOut' },
      ],
      edges: [
        { from: 'src.v', to: 'left.v' },
        { from: 'src.v', to: 'right.v' },
        { from: 'left.v', to: 'join.a' },
        { from: 'right.v', to: 'join.b' },
        { from: 'join.v', to: 'src.prev', loop: true },
        { from: 'join.v', to: 'out.value' },
        { from: 'left.v', to: 'out.left' },
      ],
    };
    const runOnce = async (delaySeed: number) => {
      const delays = createPrng(delaySeed);
      let inFlight = 0;
      let maxInFlight = 0;
      const { exec, firings } = executor(
        spec,
        {
          n: {
            src: { inputs: ['prev?'], outputs: ['v'], run: ({ inputs }) => ({ v: ((inputs.prev as number | undefined) ?? 1) % 1000 }) },
            work: {
              inputs: ['v'],
              outputs: ['v'],
              run: async ({ inputs, ctx }) => {
                inFlight++;
                maxInFlight = Math.max(maxInFlight, inFlight);
                await sleep(delays.int(4));
                inFlight--;
                return { v: (inputs.v as number) * (ctx.nodeId === 'left' ? 3 : 5) };
              },
            },
            join: { inputs: ['a', 'b'], outputs: ['v'], run: ({ inputs }) => ({ v: (inputs.a as number) + (inputs.b as number) }) },
          },
        },
        { stepBudget: 12 },
      );
      const r = await exec.run();
      return { r, maxInFlight, order: firings.map((f) => `${f.step}:${f.nodeId}`) };
    };
    const a = await runOnce(1);
    const b = await runOnce(2);
    expect(a.maxInFlight).toBe(2);
    expect(a.r).toEqual(b.r);
    expect(a.order).toEqual(b.order);
    expect(a.r.metrics).toEqual({ value: expect.any(Number), left: expect.any(Number) });
  });

  it('routes each call to the URL override of its nodeset (Map or record)', async () => {
    for (const urlOverrides of [new Map([['env', 'http://127.0.0.1:5001']]), { env: 'http://127.0.0.1:5001' }]) {
      const { exec, resolver } = executor(
        baseGraph(),
        { env: { step: counterEnv() }, agent: { act: agentDoubling } },
        {
          stepBudget: 2,
          urlOverrides,
        },
      );
      await exec.run();
      expect(resolver.urls).toEqual(['env__step@http://127.0.0.1:5001', 'env__step@http://127.0.0.1:5001']);
    }
  });

  it('reports each iteration to onStep with every node output', async () => {
    const events: StepEvent[] = [];
    const { exec } = executor(
      baseGraph(),
      { env: { step: counterEnv() }, agent: { act: agentDoubling } },
      {
        stepBudget: 2,
        onStep: (e) => events.push(e),
      },
    );
    await exec.run();
    expect(events).toEqual([
      { step: 0, outputs: { env: { position: 1, done: false, metrics: { position: 1, step: 0, reached: false } }, agent: { action: 2 } } },
      { step: 1, outputs: { env: { position: 4, done: false, metrics: { position: 4, step: 1, reached: false } }, agent: { action: 2 } } },
    ]);
  });
});

describe('LoopRunner', () => {
  it('builds a fresh executor per run, with the graph budget when none is given', async () => {
    const resolver = memoryResolver({ env: { step: counterEnv() }, agent: { act: agentDoubling } });
    const graph = validateGraph({ ...baseGraph(), step_budget: 3 }, resolver);
    const runner = new LoopRunner({ urlOverrides: { env: 'http://127.0.0.1:9' } });
    const first = await runner.run(graph, { context });
    const exec1 = runner.lastExecutor;
    expect(first).toMatchObject({ ending: 'budget_exhausted', steps: 3 });
    const second = await runner.run(graph, { context, stepBudget: 2 });
    expect(second.steps).toBe(2);
    expect(runner.lastExecutor).not.toBe(exec1);
    expect(runner.lastExecutor!.steps).toBe(2);
    expect(resolver.urls).toHaveLength(5);
  });

  it('falls back to the default budget of 500 when neither the caller nor the graph gives one', async () => {
    const resolver = memoryResolver({ env: { step: counterEnv() }, agent: { act: agentDoubling } });
    const r = await new LoopRunner().run(validateGraph(baseGraph(), resolver), { context });
    expect(r).toMatchObject({ ending: 'budget_exhausted', steps: 500 });
  });
});
