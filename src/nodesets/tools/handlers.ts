/**
 * tools: runs a model's tool calls (OpenAI `tool_calls`) as subprocesses in the episode's
 * working directory and answers with one tool message per call. A call that fails or times
 * out answers with an error message: the call fails, never the node or the run.
 */
import type { NodeCallArgs, NodeOutputs, NodesetModule } from '../../core/types.js';
import { BadInputError } from '../../errors.js';
import { showValue } from '../../core/show-value.js';
import { numberConfig } from '../_lib/config.js';
import { readToolCall, toolArguments, type ToolCall } from '../_lib/tool-call.js';
import { EpisodeWorkdirs } from './episode-workdirs.js';
import { runToolCall, toolEnv, type ToolCallLimits } from './run-tool-call.js';
import { TOOL_ISOLATION_ENV, ToolIsolationError, toolIsolation } from './tool-isolation.js';
import { BUILTIN_TOOLS, toolSet, type ToolDef } from './tool-set.js';

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_KILL_GRACE_MS = 1_000;
export const DEFAULT_MAX_OUTPUT_CHARS = 8_192;
export const DEFAULT_MAX_CALLS_PER_STEP = 8;

export type { ToolCall } from '../_lib/tool-call.js';

/** What `tool_results` holds: the messages to append to the conversation. */
export interface ToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/** One `$events` entry per call (the executor adds `step` and `nodeId`). */
export interface ToolCallEvent {
  type: 'tool_call';
  tool_call_id: string;
  name: string;
  arguments: string;
  exit_code: number | null;
  stdout: string;
  stderr: string;
  duration_ms: number;
  timed_out: boolean;
  error?: string;
}

const workdirs = new EpisodeWorkdirs();

function positiveInt(config: Record<string, unknown>, key: string, fallback: number): number {
  const n = numberConfig(config, key, fallback);
  if (!Number.isInteger(n) || n < 1) throw new BadInputError(`config ${key} must be a positive integer, got ${showValue(config[key])}`);
  return n;
}

function limitsOf(config: Record<string, unknown>): ToolCallLimits {
  return {
    timeoutMs: positiveInt(config, 'timeout_ms', DEFAULT_TIMEOUT_MS),
    killGraceMs: positiveInt(config, 'kill_grace_ms', DEFAULT_KILL_GRACE_MS),
    maxOutputChars: positiveInt(config, 'max_output_chars', DEFAULT_MAX_OUTPUT_CHARS),
  };
}

function filesOf(config: Record<string, unknown>): Record<string, string> {
  const files = config.files ?? {};
  if (typeof files !== 'object' || files === null || Array.isArray(files) || !Object.values(files).every((v) => typeof v === 'string')) {
    throw new BadInputError(`config files must be an object of relative path → text, got ${showValue(files)}`);
  }
  return files as Record<string, string>;
}

/** An error answered without starting anything (unknown tool, arguments that are not a JSON object). */
function refusal(call: ToolCall, message: string): { message: ToolMessage; event: ToolCallEvent } {
  return {
    message: { role: 'tool', tool_call_id: call.id, content: `error: ${message}` },
    event: {
      type: 'tool_call',
      tool_call_id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
      exit_code: null,
      stdout: '',
      stderr: '',
      duration_ms: 0,
      timed_out: false,
      error: message,
    },
  };
}

function checkArguments(call: ToolCall): string | undefined {
  const args = toolArguments(call);
  return typeof args === 'string' ? args : undefined;
}

/** The built-ins that run fixed code (no code of the model's choosing): these run even where calls cannot be isolated. */
const FIXED_CODE = ['calculator', 'read_file', 'list_dir'].map((name) => BUILTIN_TOOLS[name]!.command.join('\u0000'));
const runsModelCode = (tool: ToolDef): boolean => !FIXED_CODE.includes(tool.command.join('\u0000'));

async function run({ inputs, config, ctx, signal }: NodeCallArgs): Promise<NodeOutputs> {
  const tools = toolSet(config);
  const limits = limitsOf(config);
  const maxCalls = positiveInt(config, 'max_calls_per_step', DEFAULT_MAX_CALLS_PER_STEP);
  const files = filesOf(config);
  // Fires every iteration of a react loop; only a turn that asked for tools has work.
  const raw = inputs.tool_calls;
  if (raw === undefined || raw === null) return {};
  if (!Array.isArray(raw)) throw new BadInputError(`tool_calls must be an array, got ${showValue(raw)}`);
  if (raw.length === 0) return {};
  const calls = raw.map(readToolCall);
  const isolation = await toolIsolation(toolEnv('').PATH!);
  if (isolation.unavailable !== undefined) {
    const risky = calls.map((c) => tools.get(c.function.name)).find((t) => t !== undefined && runsModelCode(t));
    if (risky) {
      throw new ToolIsolationError(
        `tool ${risky.name} runs code of the model's choosing, and this machine cannot run it in a PID namespace of its own (${isolation.unavailable}): install bubblewrap (bwrap), or set ${TOOL_ISOLATION_ENV}=none in the server's environment to accept running tools without isolation`,
      );
    }
  }

  const ep = workdirs.open(ctx.episodeKey, files);
  const callSignal = signal ? AbortSignal.any([signal, ep.controller.signal]) : ep.controller.signal;
  const results: ToolMessage[] = [];
  const events: ToolCallEvent[] = [];
  // In order, one at a time: a later call may read what an earlier one wrote, and results stay reproducible.
  for (const [i, call] of calls.entries()) {
    const tool: ToolDef | undefined = tools.get(call.function.name);
    let answered: { message: ToolMessage; event: ToolCallEvent };
    if (i >= maxCalls) answered = refusal(call, `more than ${maxCalls} tool calls in one turn; this one was not run`);
    else if (!tool)
      answered = refusal(call, `unknown tool ${showValue(call.function.name)} (available: ${[...tools.keys()].join(', ') || 'none'})`);
    else {
      const bad = checkArguments(call);
      if (bad !== undefined) answered = refusal(call, bad);
      else {
        const o = await runToolCall(tool, call.function.arguments || '{}', ep.dir, limits, {
          signal: callSignal,
          groups: ep.groups,
          isolation: isolation.kind,
        });
        const event: ToolCallEvent = {
          type: 'tool_call',
          tool_call_id: call.id,
          name: tool.name,
          arguments: call.function.arguments,
          exit_code: o.exitCode,
          stdout: o.stdout,
          stderr: o.stderr,
          duration_ms: o.durationMs,
          timed_out: o.timedOut,
          ...(o.error !== undefined ? { error: o.error } : {}),
        };
        answered = { message: { role: 'tool', tool_call_id: call.id, content: o.content }, event };
      }
    }
    results.push(answered.message);
    events.push(answered.event);
    if (callSignal.aborted) break;
  }
  return { tool_results: results, $events: events };
}

const tools: NodesetModule = {
  functions: { run },
  evict: (episodeKey) => workdirs.evict(episodeKey),
};

/** Where the episodes' working directories are (tests look inside). */
export const episodeWorkdirs = workdirs;

export default tools;
