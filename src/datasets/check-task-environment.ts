/**
 * A sample's task environment (`environment`: files, setup, check), checked when the dataset is
 * read, so a bad one is refused at submit naming the sample and the field rather than found by
 * an episode's sandbox halfway through a run.
 */
import { isAbsolute, normalize } from 'node:path';

const KEYS = new Set(['files', 'setup', 'check']);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What is wrong with `env`, as [the field under `environment`, the problem]; undefined when nothing is. */
export function taskEnvironmentProblem(env: unknown): [string, string] | undefined {
  if (!isRecord(env)) return ['environment', `must be an object { files, setup, check }, got ${JSON.stringify(env)}`];
  for (const k of Object.keys(env)) if (!KEYS.has(k)) return [`environment.${k}`, 'is not a task environment key (files, setup, check)'];
  for (const k of ['setup', 'check'] as const) {
    if (env[k] !== undefined && (typeof env[k] !== 'string' || env[k] === '')) {
      return [`environment.${k}`, `must be a non-empty command string, got ${JSON.stringify(env[k])}`];
    }
  }
  if (env.files === undefined) return undefined;
  if (!isRecord(env.files)) return ['environment.files', `must be an object of relative path → text, got ${JSON.stringify(env.files)}`];
  for (const [path, content] of Object.entries(env.files)) {
    const field = `environment.files[${JSON.stringify(path)}]`;
    const norm = normalize(path);
    if (path === '' || isAbsolute(path) || norm === '..' || norm.startsWith('../') || norm === '.') {
      return [field, 'must be a path inside the working directory (relative, not leaving it with "..")'];
    }
    if (typeof content !== 'string') return [field, `must be the file's text, got ${JSON.stringify(content)}`];
  }
  return undefined;
}
