/** Argument parsing shared by the subcommands: one-line BAD_USER_INPUT errors that name the flag. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { BadInputError } from '../errors.js';

/**
 * parseArgs, with an unknown or malformed flag turned into a one-line error (followed by `usage`
 * when given), and so is a flag that takes one value given more than once: parseArgs would keep
 * the last and drop the others unsaid. Flags declared `multiple` (`--set`, `--tag`) repeat.
 */
export function parseCliArgs<T extends ParseArgsConfig>(config: T, usage?: string): ReturnType<typeof parseArgs<T>> {
  // Parsed as an untyped config (its tokens wanted too), typed as `config` says once checked.
  let parsed: ReturnType<typeof parseArgs<ParseArgsConfig>>;
  try {
    parsed = parseArgs<ParseArgsConfig>({ ...config, tokens: true });
  } catch (err) {
    const message = flagProblem(err as Error & { code?: string }, config.args ?? []);
    throw new BadInputError(usage ? `${message}; ${usage}` : message);
  }
  const message = repeatedFlag(parsed.tokens ?? [], config.options ?? {});
  if (message !== null) throw new BadInputError(usage ? `${message}; ${usage}` : message);
  const { tokens: _tokens, ...rest } = parsed;
  return (config.tokens === true ? parsed : rest) as ReturnType<typeof parseArgs<T>>;
}

/** What of parseArgs's tokens is read here: an option token has the flag's long name and its value. */
interface FlagToken {
  kind: string;
  name?: string;
  value?: string | undefined;
}

/** The first string flag not declared `multiple` that is given more than once, said in a line with its values; null when none is. */
function repeatedFlag(tokens: readonly FlagToken[], options: NonNullable<ParseArgsConfig['options']>): string | null {
  const seen = new Map<string, string[]>();
  for (const t of tokens) {
    if (t.kind !== 'option' || t.name === undefined) continue;
    const option = options[t.name];
    if (option?.type !== 'string' || option.multiple === true) continue;
    const values = seen.get(t.name) ?? [];
    values.push(t.value ?? '');
    seen.set(t.name, values);
  }
  for (const [name, values] of seen)
    if (values.length > 1)
      return `--${name} is given ${values.length} times (${values.map((v) => JSON.stringify(v)).join(', ')}); it takes one value`;
  return null;
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
