/**
 * The tools a `tools__run` node offers: the built-ins its config enables (`builtins`) plus the
 * commands it declares (`tools`), each with the description and JSON-schema parameters a model
 * is shown. Bad config gets an error naming the key and the value.
 */
import { fileURLToPath } from 'node:url';
import { BadInputError } from '../../errors.js';
import { showValue } from '../../core/show-value.js';

export interface ToolDef {
  name: string;
  /** argv; the first entry is looked up on the clean PATH. The call's arguments arrive as JSON on stdin. */
  command: string[];
  description: string;
  /** JSON schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** OpenAI's tool declaration, what an `llm__chat` node's `tools` config lists. */
export interface OpenAiTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

const script = (name: string): string => fileURLToPath(new URL(`./builtin/${name}`, import.meta.url));

/** Built-ins by name. `python` runs model-written code with the user's rights, so it is never on by default. */
export const BUILTIN_TOOLS: Readonly<Record<string, ToolDef>> = {
  calculator: {
    name: 'calculator',
    command: [process.execPath, script('calculator.mjs')],
    description:
      'Evaluates an arithmetic expression exactly as written: numbers, + - * / % ^, parentheses, pi, e, and sqrt, abs, floor, ceil, round, trunc, exp, ln, log, log2, sin, cos, tan, min, max, pow.',
    parameters: {
      type: 'object',
      properties: { expression: { type: 'string', description: 'e.g. "(17 + 25) * 3"' } },
      required: ['expression'],
    },
  },
  read_file: {
    name: 'read_file',
    command: [process.execPath, script('read_file.mjs')],
    description: 'Reads a text file of the working directory.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'relative to the working directory' } },
      required: ['path'],
    },
  },
  list_dir: {
    name: 'list_dir',
    command: [process.execPath, script('list_dir.mjs')],
    description: 'Lists a folder of the working directory (folders end with "/").',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'relative to the working directory; default "."' } },
    },
  },
  python: {
    name: 'python',
    command: ['python3', '-I', script('python.py')],
    description: 'Runs a Python 3 program in the working directory; what it prints is the result.',
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', description: 'the program; print() the answer' } },
      required: ['code'],
    },
  },
};

/** Enabled when a node's config does not say `builtins`. */
export const DEFAULT_BUILTINS: readonly string[] = ['calculator', 'read_file', 'list_dir'];

/** Built-ins that run code a model writes: offered only where the operator switched code-running tools on. */
export const CODE_BUILTINS: readonly string[] = ['python'];

/** The code-running tools a `tools__run` config offers, by name: its code built-ins and every command tool. */
export function codeToolsOf(config: Record<string, unknown>): string[] {
  const builtins: unknown[] = Array.isArray(config.builtins) ? config.builtins : [...DEFAULT_BUILTINS];
  const custom = isRecord(config.tools) ? Object.keys(config.tools) : [];
  return [...builtins.filter((b): b is string => typeof b === 'string' && CODE_BUILTINS.includes(b)), ...custom];
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads `builtins` and `tools` from a node's config. */
export function toolSet(config: Record<string, unknown>): Map<string, ToolDef> {
  const tools = new Map<string, ToolDef>();
  const builtins = config.builtins ?? DEFAULT_BUILTINS;
  if (!Array.isArray(builtins)) throw new BadInputError(`config builtins must be an array of tool names, got ${showValue(builtins)}`);
  for (const name of builtins) {
    if (typeof name !== 'string' || !Object.hasOwn(BUILTIN_TOOLS, name)) {
      throw new BadInputError(
        `config builtins: unknown built-in tool ${showValue(name)} (known: ${Object.keys(BUILTIN_TOOLS).join(', ')})`,
      );
    }
    tools.set(name, BUILTIN_TOOLS[name]!);
  }
  const custom = config.tools ?? {};
  if (!isRecord(custom))
    throw new BadInputError(`config tools must be an object of name → { command, description, parameters }, got ${showValue(custom)}`);
  for (const [name, raw] of Object.entries(custom)) {
    if (!TOOL_NAME.test(name)) throw new BadInputError(`config tools: name ${showValue(name)} must be 1-64 letters, digits, "_" or "-"`);
    if (!isRecord(raw)) throw new BadInputError(`config tools.${name} must be an object with a command, got ${showValue(raw)}`);
    const { command, description, parameters } = raw;
    if (!Array.isArray(command) || command.length === 0 || !command.every((a) => typeof a === 'string' && a !== '')) {
      throw new BadInputError(`config tools.${name}.command must be a non-empty array of strings (argv), got ${showValue(command)}`);
    }
    if (description !== undefined && typeof description !== 'string') {
      throw new BadInputError(`config tools.${name}.description must be a string, got ${showValue(description)}`);
    }
    if (parameters !== undefined && !isRecord(parameters)) {
      throw new BadInputError(`config tools.${name}.parameters must be a JSON schema object, got ${showValue(parameters)}`);
    }
    tools.set(name, {
      name,
      command: command as string[],
      description: description ?? '',
      parameters: parameters ?? { type: 'object', properties: {} },
    });
  }
  return tools;
}

/** The declarations to put in an `llm__chat` node's `tools` config so the model sees the same tools. */
export function openAiTools(tools: ReadonlyMap<string, ToolDef>): OpenAiTool[] {
  return [...tools.values()].map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}
