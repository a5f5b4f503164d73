/** `evalctl run --config`: TOML and YAML run files give the same run as the flags; bad keys are refused with their line. */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRunArgs, type RunArgs } from '../../src/cli/run.js';
import { DIST_DIR } from '../../src/paths.js';
import { MAX_YAML_ALIAS_COUNT, parseRunFile, RunFileError } from '../../src/spec/run-file.js';

const CLI = join(DIST_DIR, 'main.js');
let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'cli-run-file-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const evalctl = (args: string[]) => execa(process.execPath, [CLI, ...args], { reject: false, env: { ACTIVE_WORKSPACE_DIR: '' } });

const TOML = `# the planner on the mini split
graphName = "gridnav_planner"
episodeCount = 3
workerCount = 2
seed = 7
stepBudget = 40
dataset = "mini"

[overrides.agent]
epsilon = 0.1
`;

const YAML = `graphName: gridnav_planner
episodeCount: 3
workerCount: 2
seed: 7
stepBudget: 40
dataset: mini
overrides:
  agent:
    epsilon: 0.1
`;

const FLAGS = [
  'gridnav_planner',
  '--episodes',
  '3',
  '--workers',
  '2',
  '--seed',
  '7',
  '--step-budget',
  '40',
  '--dataset',
  'mini',
  '--set',
  'agent.epsilon=0.1',
];

async function write(name: string, text: string): Promise<string> {
  const path = join(tmp, name);
  await writeFile(path, text);
  return path;
}

/** Runs evalctl, returns the spec.json it wrote without the fields that name the run and its time. */
async function specOfRun(args: string[], outputs: string): Promise<Record<string, unknown>> {
  const r = await evalctl(['run', ...args, '--outputs', outputs, '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
  const [runId] = await readdir(join(outputs, 'eval_runs'));
  const { runId: _id, createdAt: _at, ...spec } = JSON.parse(await readFile(join(outputs, 'eval_runs', runId!, 'spec.json'), 'utf8'));
  return spec;
}

describe('evalctl run --config', { timeout: 60_000 }, () => {
  it('a TOML and a YAML run file give the same run as the equivalent flags', async () => {
    const toml = await write('eval.toml', TOML);
    const yaml = await write('eval.yaml', YAML);
    const [byFlags, byToml, byYaml] = await Promise.all([
      specOfRun(FLAGS, join(tmp, 'o-flags')),
      specOfRun(['--config', toml], join(tmp, 'o-toml')),
      specOfRun(['--config', yaml], join(tmp, 'o-yaml')),
    ]);
    expect(byFlags).toMatchObject({
      graphName: 'gridnav_planner',
      episodeCount: 3,
      workerCount: 2,
      seed: 7,
      overrides: { agent: { epsilon: 0.1 } },
    });
    expect(byToml).toEqual(byFlags);
    expect(byYaml).toEqual(byFlags);
  });

  it('an unknown key is refused naming the key and its line (exit 2)', async () => {
    const bad = await write('bad.toml', `graphName = "gridnav_planner"\nepisodeCount = 2\n\nworkers = 4\n`);
    const r = await evalctl(['run', '--config', bad, '--outputs', join(tmp, 'o-bad')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/bad\.toml line 4: unknown key "workers" \(did you mean "workerCount"\?\)/);
    expect(() => parseRunFile('graphName: g\nepisodeCount: 2\ncolour: blue\n', 'x.yaml')).toThrow(/x\.yaml line 3: unknown key "colour"/);
    expect(() => parseRunFile('{\n  "graphName": "g",\n  "overrides": {"a": {"colour": 1}},\n  "colour": 1\n}', 'x.json')).toThrow(
      /x\.json line 4: unknown key "colour"/,
    );
    expect(() => parseRunFile('graphName = "g"\n[extra]\nx = 1\n', 'x.toml')).toThrow(/x\.toml line 2: unknown key "extra"/);
    expect(() => parseRunFile('graphName = "g"\nepisodeCount = \n', 'x.toml')).toThrow(RunFileError);
    for (const key of ['constructor', 'toString', '__proto__'])
      expect(() => parseRunFile(`{"graphName": "g", "${key}": 1}`, 'x.json')).toThrow(new RegExp(`unknown key "${key}"; the keys are`));
    expect(() => parseRunFile('graphName: g\n  bad: [\n', 'x.yml')).toThrow(/x\.yml line \d+: not valid YAML/);
    // The fields startSweep sets on its runs are not a file's to set, nor listed as keys.
    expect(() => parseRunFile('graphName: g\nsweepId: sweep_20260101_000000\n', 'x.yaml')).toThrow(/x\.yaml line 2: unknown key "sweepId"/);
    expect(() => parseRunFile('graphName: g\nsweepPoint: {}\n', 'x.yaml')).toThrow(
      /unknown key "sweepPoint"; the keys are (?!.*sweepPoint)/,
    );
  });

  it('a YAML alias bomb or an alias inside its own node is refused naming the file, the line and the limit (exit 2)', async () => {
    const bomb = ['graphName: gridnav_planner', 'episodeCount: 1', 'a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i < 10; i++)
      bomb.push(
        `a${i}: &a${i} [${Array(9)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    bomb.push('overrides: {agent: {x: *a9}}');
    const file = await write('bomb.yaml', bomb.join('\n') + '\n');
    const r = await evalctl(['run', '--config', file, '--outputs', join(tmp, 'o-bomb')]);
    expect(r.exitCode).toBe(2);
    // Line 6 (a3) is the first value whose aliases alone pass the limit.
    expect(r.stderr).toContain(`bomb.yaml line 6: YAML aliases (*name) expand past the limit of ${MAX_YAML_ALIAS_COUNT} alias expansions`);
    expect(() => parseRunFile('graphName: g\noverrides:\n  agent: &a\n    self: *a\n', 'c.yaml')).toThrow(
      /^c\.yaml line 4: the alias \*a is inside the value it names/,
    );
    // Aliases within the limit are fine.
    expect(parseRunFile('graphName: g\nsweep:\n  seed: &s [1, 2]\n  episodeOffset: *s\n', 'ok.yaml').sweep).toEqual({
      seed: [1, 2],
      episodeOffset: [1, 2],
    });
  });

  it('flags override the file; --set patches its overrides; a bad value names the file line', async () => {
    const toml = await write('base.toml', TOML);
    const args = parseRunArgs(['--config', toml, '--workers', '4', '--set', 'agent.seed_bias=1', 'other_graph']) as RunArgs;
    expect(args.input).toMatchObject({
      graphName: 'other_graph',
      workerCount: 4,
      seed: 7,
      overrides: { agent: { epsilon: 0.1, seed_bias: 1 } },
    });
    const badValue = await write('bad-value.yaml', 'graphName: g\nepisodeCount: 2\nworkerCount: lots\n');
    expect(() => parseRunArgs(['--config', badValue])).toThrow(/workerCount \(bad-value\.yaml line 3\) must be an integer/);
    // A value the graph refuses names the file's overrides line (and --set when it patched them).
    const badOverride = await write(
      'bad-override.toml',
      'graphName = "gridnav_planner"\nepisodeCount = 1\n\n[overrides.env]\nstep_latency_ms = "abc"\n',
    );
    const refused = await evalctl(['run', '--config', badOverride, '--outputs', join(tmp, 'o-bad-override')]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(
      'overrides (bad-override.toml line 4): graph "gridnav_planner" is invalid: node "env": config "step_latency_ms"',
    );
    const patched = await evalctl(['run', '--config', badOverride, '--set', 'agent.epsilon=0', '--outputs', join(tmp, 'o-bad-override')]);
    expect(patched.stderr).toContain('overrides (bad-override.toml line 4) with --set: graph "gridnav_planner" is invalid');
    const sweep = parseRunFile(
      'graphName = "g"\nepisodeCount = 2\n[sweep]\nseed = [1, 2]\n"overrides.agent.epsilon" = [0, 0.2]\n',
      's.toml',
    );
    expect(sweep.sweep).toEqual({ seed: [1, 2], 'overrides.agent.epsilon': [0, 0.2] });
    expect(sweep.fields).toEqual({ graphName: 'g', episodeCount: 2 });
    expect(() => parseRunFile('graphName = "g"\n[sweep]\nseed = 3\n', 's.toml')).toThrow(
      /s\.toml line 2: "sweep\.seed" must be a non-empty list/,
    );
  });
});
