/**
 * The tools a `sandbox__tools` node offers, each a command run inside the episode's sandbox.
 * Paths need no checking here: the sandbox shows nothing but its own working directory.
 */
import { showValue } from '../../core/show-value.js';
import { BadInputError } from '../../errors.js';
import type { OpenAiTool } from '../tools/tool-set.js';

export interface SandboxCommand {
  argv: string[];
  /** What the command reads on stdin. */
  input?: string;
}

interface SandboxTool {
  declaration: OpenAiTool;
  /** The command for a call's parsed arguments; a string is what is wrong with them. */
  command(args: Record<string, unknown>): SandboxCommand | string;
}

const fn = (name: string, description: string, properties: Record<string, unknown>, required: string[]): OpenAiTool => ({
  type: 'function',
  function: { name, description, parameters: { type: 'object', properties, required } },
});

const str = (args: Record<string, unknown>, key: string, fallback?: string): string | undefined => {
  const v = args[key] ?? fallback;
  return typeof v === 'string' ? v : undefined;
};

const need = (tool: string, key: string): string => `${tool} needs a string argument "${key}"`;

export const SANDBOX_TOOLS: Readonly<Record<string, SandboxTool>> = {
  bash: {
    declaration: fn(
      'bash',
      'Runs a bash command in the task working directory (no network); what it prints, and its exit code, is the result.',
      { command: { type: 'string', description: 'e.g. "ls -la && cat README"' } },
      ['command'],
    ),
    command: (a) => {
      const c = str(a, 'command');
      return c === undefined ? need('bash', 'command') : { argv: ['bash', '-c', c] };
    },
  },
  python: {
    declaration: fn(
      'python',
      'Runs a Python 3 program in the task working directory (no network); what it prints is the result.',
      { code: { type: 'string', description: 'the program; print() the answer' } },
      ['code'],
    ),
    command: (a) => {
      const c = str(a, 'code');
      return c === undefined ? need('python', 'code') : { argv: ['python3', '-I', '-'], input: c };
    },
  },
  read_file: {
    declaration: fn('read_file', 'Reads a text file.', { path: { type: 'string', description: 'relative to the working directory' } }, [
      'path',
    ]),
    command: (a) => {
      const p = str(a, 'path');
      return p === undefined ? need('read_file', 'path') : { argv: ['cat', '--', p] };
    },
  },
  write_file: {
    declaration: fn(
      'write_file',
      'Writes a text file (its folders are created), replacing what was there.',
      { path: { type: 'string', description: 'relative to the working directory' }, content: { type: 'string' } },
      ['path', 'content'],
    ),
    command: (a) => {
      const p = str(a, 'path');
      const c = str(a, 'content');
      if (p === undefined) return need('write_file', 'path');
      if (c === undefined) return need('write_file', 'content');
      return { argv: ['sh', '-c', 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"', 'write_file', p], input: c };
    },
  },
  list_dir: {
    declaration: fn(
      'list_dir',
      'Lists a folder (folders end with "/").',
      { path: { type: 'string', description: 'relative to the working directory; default "."' } },
      [],
    ),
    command: (a) => {
      const p = str(a, 'path', '.');
      return p === undefined ? need('list_dir', 'path') : { argv: ['ls', '-Ap', '--', p] };
    },
  },
};

export const DEFAULT_SANDBOX_TOOLS: readonly string[] = Object.keys(SANDBOX_TOOLS);

/** The tools a node's `tools` config names (all of them by default). */
export function sandboxToolsOf(config: Record<string, unknown>): string[] {
  const names = config.tools ?? DEFAULT_SANDBOX_TOOLS;
  if (!Array.isArray(names)) throw new BadInputError(`config tools must be an array of tool names, got ${showValue(names)}`);
  for (const n of names) {
    if (typeof n !== 'string' || !Object.hasOwn(SANDBOX_TOOLS, n)) {
      throw new BadInputError(`config tools: unknown sandbox tool ${showValue(n)} (known: ${DEFAULT_SANDBOX_TOOLS.join(', ')})`);
    }
  }
  return names as string[];
}

/** The declarations an `llm__chat` node's `tools` config lists for these tools. */
export const sandboxToolDeclarations = (names: readonly string[]): OpenAiTool[] => names.map((n) => SANDBOX_TOOLS[n]!.declaration);
