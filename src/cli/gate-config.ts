/**
 * A gate's config file (`evalctl gate --config gate.toml`):
 *
 *     alpha = 0.05
 *     require = ["success >= -0.02", "|steps| <= 2"]
 *
 * Both keys are optional; any other key is refused, so a misspelt one is not silently ignored.
 */
import { readFile } from 'node:fs/promises';
import { parse as parseToml, TomlError } from 'smol-toml';
import { BadInputError, errorMessage } from '../errors.js';

export interface GateConfig {
  alpha?: number;
  require?: string[];
}

const KEYS = new Set(['alpha', 'require']);

/** The config in `file`; BAD_USER_INPUT naming the file and what is wrong with it. */
export async function readGateConfig(file: string): Promise<GateConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new BadInputError(`--config ${file}: cannot read it (${errorMessage(err)})`);
  }
  let data: Record<string, unknown>;
  try {
    data = parseToml(text);
  } catch (err) {
    if (err instanceof TomlError)
      throw new BadInputError(`--config ${file}: not valid TOML at line ${err.line}: ${err.message.split('\n')[0]}`);
    throw err;
  }
  const unknown = Object.keys(data).filter((k) => !KEYS.has(k));
  if (unknown.length > 0) throw new BadInputError(`--config ${file}: unknown key(s) ${unknown.join(', ')}; the keys are alpha and require`);
  const out: GateConfig = {};
  if (data.alpha !== undefined) {
    if (typeof data.alpha !== 'number' || !(data.alpha > 0 && data.alpha < 1))
      throw new BadInputError(`--config ${file}: alpha must be a number strictly between 0 and 1, got ${JSON.stringify(data.alpha)}`);
    out.alpha = data.alpha;
  }
  if (data.require !== undefined) {
    if (!Array.isArray(data.require) || !data.require.every((r) => typeof r === 'string'))
      throw new BadInputError(`--config ${file}: require must be a list of strings such as ["success >= -0.02"]`);
    out.require = data.require as string[];
  }
  return out;
}
