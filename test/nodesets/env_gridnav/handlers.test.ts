import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import env from '../../../src/nodesets/env_gridnav/handlers.js';
import { cellPixels } from '../../../src/nodesets/env_gridnav/render.js';
import type { GridNavObservation } from '../../../src/nodesets/env_gridnav/observation.js';
import { isAssetValue, type AssetValue, type NodeOutputs } from '../../../src/core/types.js';
import { ctxFor, drive } from '../drive.js';

const step = env.functions!.step!;
const panel = env.panel!;

function decodePng(value: unknown): PNG {
  expect(isAssetValue(value)).toBe(true);
  const { $asset } = value as AssetValue;
  expect($asset).toMatchObject({ name: 'trajectory.png', mime: 'image/png' });
  return PNG.sync.read(Buffer.from($asset.data, 'base64'));
}

describe('env_gridnav panel', () => {
  it('cascades dataset → split → episode with fixed episode counts', () => {
    expect(panel.options('dataset', {})).toEqual(['mini', 'standard', 'large']);
    expect(panel.options('split', { dataset: 'mini' })).toEqual(['train', 'val', 'test']);
    expect(panel.options('episode', { dataset: 'mini', split: 'val' })).toHaveLength(200);
    expect(panel.options('episode', { dataset: 'standard', split: 'train' })).toHaveLength(2000);
  });

  it('rejects unknown fields and values, naming them', () => {
    expect(() => panel.options('split', { dataset: 'huge' })).toThrow(/dataset "huge"/);
    expect(() => panel.options('colour', {})).toThrow(/field "colour"/);
    expect(() => panel.load({ dataset: 'mini', split: 'dev', episode: 0 }, 'k')).toThrow(/split "dev"/);
    expect(() => panel.load({ dataset: 'mini', split: 'val', episode: 200 }, 'k')).toThrow(/episode 200 is out of range/);
  });

  it('loads an episode and publishes a step budget that depends on the maze', async () => {
    const loaded = await Promise.all(
      Array.from({ length: 8 }, (_, i) => panel.load({ dataset: 'standard', split: 'val', episode: i }, `budget:${i}`)),
    );
    for (const i of loaded.keys()) env.evict!(`budget:${i}`);
    expect(loaded[2]).toMatchObject({ episodeId: 'standard/val/2', scene: 'standard maze 21×21' });
    expect(loaded[2]!.instruction).toMatch(/^Go to the goal at row \d+, column \d+ and stop there\.$/);
    expect(['near', 'mid', 'far']).toContain(loaded[2]!.task);
    const budgets = loaded.map((l) => l.stepBudget!);
    expect(new Set(budgets).size).toBeGreaterThan(1);
    const mini = await panel.load({ dataset: 'mini', split: 'val', episode: 0 }, 'budget:mini');
    const large = await panel.load({ dataset: 'large', split: 'val', episode: 0 }, 'budget:large');
    env.evict!('budget:mini');
    env.evict!('budget:large');
    expect(large.stepBudget!).toBeGreaterThan(mini.stepBudget!);
  });
});

describe('env_gridnav step', () => {
  it('observes without acting at iteration 0', async () => {
    await panel.load({ dataset: 'mini', split: 'val', episode: 5 }, 'obs:0');
    const out = await step({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'obs:0' }) });
    env.evict!('obs:0');
    const obs = out.observation as GridNavObservation;
    expect(obs.grid).toHaveLength(11);
    expect(obs.grid.every((row) => /^[#.]{11}$/.test(row))).toBe(true);
    expect(obs.steps).toBe(0);
    expect(obs.distance_to_goal).toBeGreaterThan(0);
    expect(out.done).toBe(false);
    expect(out.trajectory).toBeUndefined();
    expect(out.metrics).toEqual({ success: 0, spl: 0, distance_to_goal: obs.distance_to_goal, steps: 0 });
  });

  it('turns and moves as Habitat does', async () => {
    await panel.load({ dataset: 'mini', split: 'val', episode: 5 }, 'move');
    const call = (s: number, action?: string): Promise<NodeOutputs> =>
      Promise.resolve(step({ inputs: action ? { action } : {}, config: {}, ctx: ctxFor(s, { episodeKey: 'move' }) }));
    const o0 = (await call(0)).observation as GridNavObservation;
    const o1 = (await call(1, 'turn_right')).observation as GridNavObservation;
    expect(o1.heading).toBe((o0.heading + 1) % 4);
    expect(o1.position).toEqual(o0.position);
    const o2 = (await call(2, 'turn_left')).observation as GridNavObservation;
    expect(o2.heading).toBe(o0.heading);
    const o3 = (await call(3, 'forward')).observation as GridNavObservation;
    const moved = Math.abs(o3.position[0] - o0.position[0]) + Math.abs(o3.position[1] - o0.position[1]);
    expect(moved).toBe(o0.free_ahead > 0 ? 1 : 0);
    expect(o3.steps).toBe(3);
    await expect(call(4, 'jump')).rejects.toThrow(/unknown gridnav action "jump"/);
    env.evict!('move');
  });

  it('creates the state lazily from the panel defaults and the episode index when never loaded', async () => {
    const lazy = await step({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'lazy', episodeIndex: 4 }) });
    await panel.load({ dataset: 'standard', split: 'val', episode: 4 }, 'loaded');
    const loaded = await step({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'loaded', episodeIndex: 4 }) });
    env.evict!('lazy');
    env.evict!('loaded');
    expect(lazy.observation).toEqual(loaded.observation);
  });

  it('drops an episode on evict', async () => {
    await panel.load({ dataset: 'mini', split: 'train', episode: 9 }, 'evict');
    const before = await step({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'evict', episodeIndex: 1 }) });
    env.evict!('evict');
    const after = await step({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'evict', episodeIndex: 1 }) });
    env.evict!('evict');
    expect((before.observation as GridNavObservation).grid).toHaveLength(11);
    // Evicted: the key now holds the default episode for index 1 (standard/val/1).
    expect((after.observation as GridNavObservation).grid).toHaveLength(21);
  });

  it('keeps episodes under different keys apart', async () => {
    await panel.load({ dataset: 'mini', split: 'val', episode: 1 }, 'a');
    await panel.load({ dataset: 'mini', split: 'val', episode: 1 }, 'b');
    await step({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'a' }) });
    await step({ inputs: { action: 'turn_left' }, config: {}, ctx: ctxFor(1, { episodeKey: 'a' }) });
    const b = await step({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'b' }) });
    env.evict!('a');
    env.evict!('b');
    expect((b.observation as GridNavObservation).steps).toBe(0);
  });

  it('ends with done on stop, with the trajectory PNG of the right size only at the end', async () => {
    const run = await drive({
      env,
      values: { dataset: 'mini', split: 'val', episode: 2 },
      episodeKey: 'png',
      agent: (o) => ((o as GridNavObservation).steps < 3 ? 'forward' : 'stop'),
    });
    expect(run.steps).toHaveLength(5);
    expect(run.steps.slice(0, -1).every((s) => s.trajectory === undefined && s.done === false)).toBe(true);
    expect(run.last.done).toBe(true);
    const png = decodePng(run.last.trajectory);
    const px = cellPixels({ rows: 11, cols: 11 });
    expect([png.width, png.height]).toEqual([11 * px, 11 * px]);
    // The maze's border is wall: its corner pixel is wall grey, opaque.
    expect([...png.data.subarray(0, 4)]).toEqual([43, 43, 43, 255]);
  });

  it('draws the trajectory at the last step of an episode that runs out of steps', async () => {
    const run = await drive({
      env,
      values: { dataset: 'mini', split: 'val', episode: 2 },
      episodeKey: 'out-of-steps',
      agent: () => 'turn_left',
      budget: 4,
    });
    expect(run.steps).toHaveLength(4);
    expect(run.last.done).toBe(false);
    expect(run.steps.slice(0, -1).every((s) => s.trajectory === undefined)).toBe(true);
    expect(decodePng(run.last.trajectory).width).toBe(11 * cellPixels({ rows: 11, cols: 11 }));
  });

  it('refuses an action after stop', async () => {
    await panel.load({ dataset: 'mini', split: 'val', episode: 2 }, 'after-stop');
    await step({ inputs: {}, config: {}, ctx: ctxFor(0, { episodeKey: 'after-stop' }) });
    await step({ inputs: { action: 'stop' }, config: {}, ctx: ctxFor(1, { episodeKey: 'after-stop' }) });
    await expect(
      Promise.resolve(step({ inputs: { action: 'forward' }, config: {}, ctx: ctxFor(2, { episodeKey: 'after-stop' }) })),
    ).rejects.toThrow(/already ended with stop/);
    env.evict!('after-stop');
  });

  it('renders every step with render_every_step, for live play', async () => {
    const run = await drive({
      env,
      values: { dataset: 'large', split: 'val', episode: 0 },
      episodeKey: 'live',
      envConfig: { render_every_step: true },
      agent: () => 'turn_left',
      budget: 3,
    });
    const px = cellPixels({ rows: 41, cols: 41 });
    for (const s of run.steps) expect(decodePng(s.trajectory).width).toBe(41 * px);
  });

  it('throws at fail_at_step and only there', async () => {
    await panel.load({ dataset: 'mini', split: 'val', episode: 0 }, 'fail');
    const call = (s: number) =>
      Promise.resolve(
        step({ inputs: s ? { action: 'turn_left' } : {}, config: { fail_at_step: 2 }, ctx: ctxFor(s, { episodeKey: 'fail' }) }),
      );
    await expect(call(0)).resolves.toBeDefined();
    await expect(call(1)).resolves.toBeDefined();
    await expect(call(2)).rejects.toThrow(/failed on purpose at step 2/);
    env.evict!('fail');
    await expect(
      Promise.resolve(step({ inputs: {}, config: { fail_at_step: 'soon' }, ctx: ctxFor(0, { episodeKey: 'fail' }) })),
    ).rejects.toThrow(/fail_at_step must be a number, got "soon"/);
    env.evict!('fail');
  });

  it('sleeps step_latency_ms per step and stops sleeping when aborted', async () => {
    const t0 = performance.now();
    await step({ inputs: {}, config: { step_latency_ms: 60 }, ctx: ctxFor(0, { episodeKey: 'slow' }) });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(55);
    const ac = new AbortController();
    const t1 = performance.now();
    const pending = Promise.resolve(
      step({ inputs: {}, config: { step_latency_ms: 10_000 }, ctx: ctxFor(0, { episodeKey: 'slow' }), signal: ac.signal }),
    );
    setTimeout(() => ac.abort(new Error('cancelled by test')), 20);
    await expect(pending).rejects.toThrow(/cancelled by test/);
    expect(performance.now() - t1).toBeLessThan(2000);
    env.evict!('slow');
  });

  it('spends step_compute_ms of CPU time per step without changing what the agent sees', async () => {
    const actions = ['forward', 'turn_left', 'forward', 'turn_right', 'stop'];
    const run = async (key: string, config: Record<string, unknown>): Promise<NodeOutputs[]> => {
      const outs: NodeOutputs[] = [];
      for (let s = 0; s <= actions.length; s++) {
        outs.push(await step({ inputs: s ? { action: actions[s - 1] } : {}, config, ctx: ctxFor(s, { episodeKey: key }) }));
      }
      env.evict!(key);
      return outs;
    };
    const plain = await run('plain', {});
    const cpu0 = process.cpuUsage();
    const busy = await run('busy', { step_compute_ms: 15 });
    const cpu = process.cpuUsage(cpu0);
    expect(busy).toEqual(plain);
    // Six steps of 15 ms of CPU each, measured in CPU time: at least 90 ms of it, however busy the machine.
    expect((cpu.user + cpu.system) / 1000).toBeGreaterThanOrEqual(90);
    await expect(
      Promise.resolve(step({ inputs: {}, config: { step_compute_ms: -1 }, ctx: ctxFor(0, { episodeKey: 'neg' }) })),
    ).rejects.toThrow(/step_compute_ms must be ≥ 0, got -1/);
    env.evict!('neg');
  });

  it('exits the host process at crash_at_step', async () => {
    const handlers = fileURLToPath(new URL('../../../src/nodesets/env_gridnav/handlers.ts', import.meta.url));
    const script = [
      `const env = (await import(${JSON.stringify(handlers)})).default;`,
      `const ctx = (step) => ({ runSeed: 0, episodeIndex: 0, seed: 1, step, episodeKey: 'crash', nodeId: 'env' });`,
      `await env.functions.step({ inputs: {}, config: { crash_at_step: 1 }, ctx: ctx(0) });`,
      `console.log('step 0 ok');`,
      `await env.functions.step({ inputs: { action: 'forward' }, config: { crash_at_step: 1 }, ctx: ctx(1) });`,
      `console.log('survived step 1');`,
    ].join('\n');
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    });
    const err = (await run.then(
      () => undefined,
      (e: unknown) => e,
    )) as { code?: number; stdout?: string } | undefined;
    expect(err?.code).toBe(1);
    expect(err?.stdout).toContain('step 0 ok');
    expect(err?.stdout).not.toContain('survived');
  });
});
