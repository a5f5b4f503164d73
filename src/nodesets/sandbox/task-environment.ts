/** A sample's task environment: what its sandbox starts with, and the check that decides success. */
import { showValue } from '../../core/show-value.js';
import { BadInputError } from '../../errors.js';

export interface TaskEnvironment {
  /** Files put in the working directory: relative path → text. */
  files: Record<string, string>;
  /** A bash command run once in the sandbox before the agent's first call; a failure ends the episode. */
  setup?: string;
  /** A bash command run in the sandbox after the agent stops: exit 0 passes. */
  check?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The environment of a sample (its `metadata.environment`), or of the node's config `environment`; naming what is wrong. */
export function taskEnvironmentOf(sample: unknown, config: Record<string, unknown>): TaskEnvironment {
  const meta = isRecord(sample) && isRecord(sample.metadata) ? sample.metadata : {};
  const [raw, where] =
    meta.environment !== undefined ? [meta.environment, 'sample environment'] : [config.environment ?? {}, 'config environment'];
  if (!isRecord(raw)) throw new BadInputError(`${where} must be an object { files, setup, check }, got ${showValue(raw)}`);
  const files = raw.files ?? {};
  if (!isRecord(files) || !Object.values(files).every((v) => typeof v === 'string')) {
    throw new BadInputError(`${where}.files must be an object of relative path → text, got ${showValue(files)}`);
  }
  for (const key of ['setup', 'check'] as const) {
    if (raw[key] !== undefined && typeof raw[key] !== 'string')
      throw new BadInputError(`${where}.${key} must be a command string, got ${showValue(raw[key])}`);
  }
  return {
    files: files as Record<string, string>,
    ...(typeof raw.setup === 'string' ? { setup: raw.setup } : {}),
    ...(typeof raw.check === 'string' ? { check: raw.check } : {}),
  };
}
