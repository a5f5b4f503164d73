/** Argument parsing shared by the subcommands: one-line BAD_USER_INPUT errors that name the flag. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { BadInputError } from '../errors.js';

/** parseArgs, with an unknown or malformed flag turned into a one-line error (followed by `usage` when given). */
export function parseCliArgs<T extends ParseArgsConfig>(config: T, usage?: string): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    const message = flagProblem(err as Error & { code?: string }, config.args ?? []);
    throw new BadInputError(usage ? `${message}; ${usage}` : message);
  }
}

/** parseArgs's error in a line, said the way the other flag errors are (its own wording suggests fixes that do not fit). */
function flagProblem(err: Error & { code?: string }, args: readonly string[]): string {
  // "Option '-h, --help' …", "Option '--episodes <value>' …", "Unknown option '--x' …": the long name where there is one.
  const quoted = /^(?:Option|Unknown option) '([^']+)'/.exec(err.message)?.[1]?.split(/[ ,]+/);
  const flag = quoted?.find((t) => t.startsWith('--')) ?? quoted?.[0];
  if (flag !== undefined) {
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${flag}`;
    if (/ambiguous/.test(err.message)) {
      // The value given looks like a flag: a negative number, most often.
      const next = args[args.indexOf(flag) + 1];
      if (next !== undefined)
        return `${flag} needs a value, and "${next}" after it starts with "-": write ${flag}=${next} to pass it as the value`;
    }
    if (/argument missing/.test(err.message)) return `${flag} needs a value`;
    if (/does not take an argument/.test(err.message)) return `${flag} takes no value`;
  }
  return err.message.replace(/\s*\n\s*/g, ' ');
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
