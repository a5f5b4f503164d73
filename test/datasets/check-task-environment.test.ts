/**
 * A dataset whose sample has a bad task environment is refused at submit (`evalctl run`),
 * refused naming the file, the line, the field and the sample; nothing runs.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskEnvironmentProblem } from '../../src/datasets/check-task-environment.js';
import { DIST_DIR } from '../../src/paths.js';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'task-env-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('task environments at submit', { timeout: 60_000 }, () => {
  it('refuses a path that leaves the working directory, naming the sample and the field, and runs nothing', async () => {
    const ws = join(tmp, 'ws');
    await mkdir(join(ws, 'datasets', 'bad_env'), { recursive: true });
    const good = { id: 'fine', input: 'Task: ok', environment: { files: { 'a.txt': 'x' }, check: 'true' } };
    const bad = { id: 'sneaky', input: 'Task: read', environment: { files: { '../../etc/cron.d/x': 'boom' }, check: 'true' } };
    await writeFile(join(ws, 'datasets', 'bad_env', 'test.jsonl'), `${JSON.stringify(good)}\n${JSON.stringify(bad)}\n`);
    const outputs = join(tmp, 'outputs');
    const r = await execa(
      process.execPath,
      [join(DIST_DIR, 'main.js'), 'run', 'agent_sandbox', '--dataset', 'bad_env', '--episodes', '2', '--outputs', outputs, '--json'],
      { reject: false, env: { ACTIVE_WORKSPACE_DIR: ws, OPENAI_API_KEY: 'sk-unused-123456', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } },
    );
    expect(r.exitCode).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain(
      'test.jsonl:2: field "environment.files["../../etc/cron.d/x"]": must be a path inside the working directory (relative, not leaving it with "..") (sample "sneaky")',
    );
    expect(await readdir(outputs).catch(() => [])).toEqual([]);
  });

  it('names each kind of problem', () => {
    expect(taskEnvironmentProblem({ files: { '/etc/passwd': 'x' } })?.[0]).toBe('environment.files["/etc/passwd"]');
    expect(taskEnvironmentProblem({ files: { 'a/../../x': 'x' } })?.[0]).toBe('environment.files["a/../../x"]');
    expect(taskEnvironmentProblem({ files: { 'ok.txt': 3 } })).toEqual(['environment.files["ok.txt"]', "must be the file's text, got 3"]);
    expect(taskEnvironmentProblem({ check: 42 })).toEqual(['environment.check', 'must be a non-empty command string, got 42']);
    expect(taskEnvironmentProblem({ tarball: 'x.tgz' })).toEqual([
      'environment.tarball',
      'is not a task environment key (files, setup, check)',
    ]);
    expect(taskEnvironmentProblem('rm -rf /')?.[0]).toBe('environment');
    expect(taskEnvironmentProblem({ files: { 'a/b.txt': '' }, setup: 'true', check: 'true' })).toBeUndefined();
  });
});
