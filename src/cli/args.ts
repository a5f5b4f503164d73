/** Argument parsing shared by the subcommands: one-line BAD_USER_INPUT errors that name the flag. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { BadInputError } from '../errors.js';

/** parseArgs, with an unknown or malformed flag turned into a one-line error (followed by `usage` when given). */
export function parseCliArgs<T extends ParseArgsConfig>(config: T, usage?: string): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    const message = (err as Error).message.replace(/\s*\n\s*/g, ' ');
    throw new BadInputError(usage ? `${message}; ${usage}` : message);
  }
}

/** An integer flag ≥ `min`, or undefined when absent; the error says it must be `expected`. */
export function intFlag(flag: string, raw: string | undefined, min: number, expected = `an integer ≥ ${min}`): number | undefined {
  if (raw === undefined) return undefined;
  const v = Number(raw);
  if (raw.trim() === '' || !Number.isSafeInteger(v) || v < min) throw new BadInputError(`--${flag} must be ${expected}, got "${raw}"`);
  return v;
}

/** The options every listing command takes. */
export const LIST_OPTIONS = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

type CommandOptions = NonNullable<ParseArgsConfig['options']>;
type CommandConfig<O extends CommandOptions> = { args: string[]; allowPositionals: true; strict: true; options: O & typeof LIST_OPTIONS };

/**
 * A run-level subcommand's flags (positionals allowed; `--json` and `--help` added), or
 * undefined once `--help` has printed the usage.
 */
export function parseCommandArgs<const O extends CommandOptions>(
  argv: string[],
  options: O,
  usage: string,
): ReturnType<typeof parseArgs<CommandConfig<O>>> | undefined {
  const config: CommandConfig<O> = { args: argv, allowPositionals: true, strict: true, options: { ...options, ...LIST_OPTIONS } };
  const parsed = parseCliArgs(config, usage);
  if ((parsed.values as { help?: boolean }).help === true) {
    process.stdout.write(usage + '\n');
    return undefined;
  }
  return parsed;
}
