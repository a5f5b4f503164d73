/**
 * sandbox: each episode's tool calls (bash, python, read_file, write_file, list_dir) run in a
 * sandbox of its own built from the sample's task environment, and `check` runs the task's
 * check there once the agent has answered. A call that fails, times out or hits a limit answers
 * with an error message; the episode goes on.
 */
import type { NodeCallArgs, NodeOutputs, NodesetModule } from '../../core/types.js';
import { showValue } from '../../core/show-value.js';
import { BadInputError } from '../../errors.js';
import { booleanConfig, numberConfig } from '../_lib/config.js';
import type { ToolCallEvent, ToolMessage } from '../tools/handlers.js';
import { readToolCall, toolArguments, type ToolCall } from '../_lib/tool-call.js';
import { SANDBOX_PATH, SANDBOX_WORKDIR, sandboxArgv } from './bwrap-argv.js';
import { type ExecOutcome, execInSandbox } from './sandbox-exec.js';
import { SandboxSetupError, SandboxUnavailableError } from './sandbox-errors.js';
import { type SandboxLimits, sandboxLimitsOf } from './sandbox-limits.js';
import { type Sandbox, SandboxPool } from './sandbox-pool.js';
import { SANDBOX_TOOLS, sandboxToolsOf } from './sandbox-tools.js';
import { taskEnvironmentOf } from './task-environment.js';

export const DEFAULT_MAX_CALLS_PER_STEP = 8;
const PROVIDERS = ['bwrap', 'none'] as const;
type Provider = (typeof PROVIDERS)[number];

const pool = new SandboxPool();

interface Usage {
  calls: number;
  errors: number;
  ms: number;
}
const usage = new Map<string, Usage>();

function providerOf(config: Record<string, unknown>): Provider {
  const p = config.provider ?? 'bwrap';
  if (typeof p !== 'string' || !(PROVIDERS as readonly string[]).includes(p)) {
    throw new BadInputError(`config provider must be one of ${PROVIDERS.join(', ')}, got ${showValue(p)}`);
  }
  if (p === 'none' && !booleanConfig(config, 'allow_unsandboxed', false)) {
    throw new SandboxUnavailableError(
      'provider "none" runs the model\'s commands with the server\'s rights: set allow_unsandboxed: true to accept that',
    );
  }
  return p as Provider;
}

/** The command line for `argv` in `sb`: the bwrap sandbox, or (provider none) a clean environment in its directory. */
function argvFor(provider: Provider, sb: Sandbox, limits: SandboxLimits, argv: string[]): string[] {
  if (provider === 'bwrap') return sandboxArgv(sb, limits, argv);
  return [
    'env',
    '-i',
    `PATH=${SANDBOX_PATH}`,
    `HOME=${sb.dir}`,
    `TMPDIR=${sb.tmp}`,
    'LANG=C.UTF-8',
    'sh',
    '-c',
    'cd "$0" && exec "$@"',
    sb.dir,
    ...argv,
  ];
}

let probed: Promise<string | undefined> | undefined;

/** Why bwrap sandboxes cannot start here (undefined: they can); found once per process. */
function bwrapProblem(limits: SandboxLimits): Promise<string | undefined> {
  probed ??= (async () => {
    const key = `probe:${process.pid}`;
    const sb = pool.open(key, {});
    try {
      const r = await execInSandbox(sandboxArgv(sb, limits, ['true']), {
        limits: { timeoutMs: 10_000, killGraceMs: 500, maxOutputChars: 2_000 },
        signal: sb.controller.signal,
        groups: sb.groups,
      });
      if (r.exitCode === 0) return undefined;
      return r.startError ?? (r.stderr.trim().split('\n')[0] || `exit ${r.exitCode ?? r.signal}`);
    } finally {
      pool.destroy(key);
    }
  })();
  return probed;
}

/** The episode's sandbox, made (and its setup run) on first use. */
async function sandboxFor(args: NodeCallArgs, provider: Provider, limits: SandboxLimits): Promise<Sandbox> {
  const key = args.ctx.episodeKey;
  let sb = pool.get(key);
  if (!sb) {
    if (provider === 'bwrap') {
      const problem = await bwrapProblem(limits);
      if (problem !== undefined) {
        throw new SandboxUnavailableError(
          `bubblewrap cannot start a sandbox on this machine (${problem}): install bubblewrap, or set provider "none" with allow_unsandboxed: true`,
        );
      }
    }
    const env = taskEnvironmentOf(args.inputs.sample, args.config);
    sb = pool.get(key) ?? pool.open(key, env.files);
    const box = sb;
    const setup = env.setup;
    box.ready ??=
      setup === undefined
        ? Promise.resolve(undefined)
        : execInSandbox(argvFor(provider, box, limits, ['bash', '-c', setup]), {
            limits: { timeoutMs: limits.checkTimeoutMs, killGraceMs: limits.killGraceMs, maxOutputChars: limits.maxOutputChars },
            signal: box.controller.signal,
            groups: box.groups,
          }).then((r) => (r.exitCode === 0 ? undefined : failureText('setup', r, limits.checkTimeoutMs)));
  }
  const failed = await sb.ready;
  if (failed !== undefined) throw new SandboxSetupError(failed);
  return sb;
}

/** Why a command failed, in words a model (and a reader of the history) can act on; undefined when it succeeded. */
function failureOf(name: string, r: ExecOutcome, timeoutMs: number): string | undefined {
  if (r.startError) return `cannot run ${name}: ${r.startError}`;
  if (r.timedOut) return `${name} timed out after ${timeoutMs} ms and was killed`;
  if (r.signal === 'SIGXCPU') return `${name} used up its CPU time limit and was killed`;
  if (r.signal === 'SIGXFSZ' || r.exitCode === 128 + 25) return `${name} wrote past the file size limit`;
  if (r.signal) return `${name} was killed by ${r.signal}`;
  if (r.exitCode !== 0) {
    const why = (r.stderr || r.stdout).trim();
    return `${name} exited with code ${r.exitCode}${why ? `: ${why}` : ''}`;
  }
  return undefined;
}

const failureText = (name: string, r: ExecOutcome, timeoutMs: number): string => failureOf(name, r, timeoutMs) ?? `${name} succeeded`;

function event(call: ToolCall, o: Partial<ExecOutcome>, error?: string): ToolCallEvent {
  return {
    type: 'tool_call',
    tool_call_id: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
    exit_code: o.exitCode ?? null,
    stdout: o.stdout ?? '',
    stderr: o.stderr ?? '',
    duration_ms: o.durationMs ?? 0,
    timed_out: o.timedOut ?? false,
    ...(error !== undefined ? { error } : {}),
  };
}

async function tools(args: NodeCallArgs): Promise<NodeOutputs> {
  const { inputs, config, ctx, signal } = args;
  const names = sandboxToolsOf(config);
  const limits = sandboxLimitsOf(config);
  const provider = providerOf(config);
  const maxCalls = numberConfig(config, 'max_calls_per_step', DEFAULT_MAX_CALLS_PER_STEP);
  if (!Number.isInteger(maxCalls) || maxCalls < 1) {
    throw new BadInputError(`config max_calls_per_step must be a positive integer, got ${showValue(config.max_calls_per_step)}`);
  }
  const raw = inputs.tool_calls;
  if (raw === undefined || raw === null) return {};
  if (!Array.isArray(raw)) throw new BadInputError(`tool_calls must be an array, got ${showValue(raw)}`);
  if (raw.length === 0) return {};
  const calls = raw.map(readToolCall);
  const sb = await sandboxFor(args, provider, limits);
  const callSignal = signal ? AbortSignal.any([signal, sb.controller.signal]) : sb.controller.signal;
  const u = usage.get(ctx.episodeKey) ?? { calls: 0, errors: 0, ms: 0 };
  usage.set(ctx.episodeKey, u);
  const results: ToolMessage[] = [];
  const events: ToolCallEvent[] = [];
  // One at a time, in order: a later call may read what an earlier one wrote.
  for (const [i, call] of calls.entries()) {
    const name = call.function.name;
    const parsed = toolArguments(call);
    const cmd =
      i >= maxCalls
        ? `more than ${maxCalls} tool calls in one turn; this one was not run`
        : !names.includes(name)
          ? `unknown tool ${showValue(name)} (available: ${names.join(', ')})`
          : typeof parsed === 'string'
            ? parsed
            : SANDBOX_TOOLS[name]!.command(parsed);
    u.calls++;
    if (typeof cmd === 'string') {
      u.errors++;
      results.push({ role: 'tool', tool_call_id: call.id, content: `error: ${cmd}` });
      events.push(event(call, {}, cmd));
      continue;
    }
    const r = await execInSandbox(argvFor(provider, sb, limits, cmd.argv), {
      ...(cmd.input !== undefined ? { input: cmd.input } : {}),
      limits,
      signal: callSignal,
      groups: sb.groups,
    });
    u.ms += r.durationMs;
    const error = callSignal.aborted ? `${name} was stopped: the episode ended` : failureOf(name, r, limits.timeoutMs);
    if (error !== undefined) u.errors++;
    const cutNote = r.truncated ? `\n[output cut at ${limits.maxOutputChars} characters]` : '';
    results.push({ role: 'tool', tool_call_id: call.id, content: error !== undefined ? `error: ${error}` : `${r.stdout}${cutNote}` });
    events.push(event(call, r, error));
    if (callSignal.aborted) break;
  }
  return { tool_results: results, $events: events };
}

const answerText = (a: unknown): string => {
  if (typeof a === 'string') return a;
  if (typeof a === 'object' && a !== null && typeof (a as { content?: unknown }).content === 'string')
    return (a as { content: string }).content;
  return a === undefined || a === null ? '' : JSON.stringify(a);
};

/** Runs the task's check once the agent answered: exit 0 passes; its output is the explanation. */
async function check(args: NodeCallArgs): Promise<NodeOutputs> {
  const { inputs, config, ctx } = args;
  if (inputs.answer === undefined) return {};
  const limits = sandboxLimitsOf(config);
  const provider = providerOf(config);
  const env = taskEnvironmentOf(inputs.sample, config);
  const answer = answerText(inputs.answer);
  const u = usage.get(ctx.episodeKey) ?? { calls: 0, errors: 0, ms: 0 };
  const toolMetrics = { tool_calls: u.calls, tool_errors: u.errors, tool_ms: u.ms };
  if (env.check === undefined) {
    const explanation = 'the sample has no check';
    return {
      score: { scorer: 'check', value: 0, answer, extracted: null, target: null, explanation },
      metrics: { score: 0, correct: 0, ...toolMetrics },
      done: true,
    };
  }
  const sb = await sandboxFor(args, provider, limits);
  // The answer is there for a check that grades it ($ANSWER_FILE); the agent's files are the rest.
  const r = await execInSandbox(argvFor(provider, sb, limits, ['bash', '-c', `printf %s "$1" > .answer; ${env.check}`, 'check', answer]), {
    limits: { timeoutMs: limits.checkTimeoutMs, killGraceMs: limits.killGraceMs, maxOutputChars: limits.maxOutputChars },
    signal: sb.controller.signal,
    groups: sb.groups,
  });
  const passed = r.exitCode === 0 && !r.timedOut;
  const output = `${r.stdout}${r.stderr ? `\n${r.stderr}` : ''}`.trim();
  const explanation = passed
    ? `check passed${output ? `: ${output}` : ''}`
    : `check failed: ${failureOf('check', r, limits.checkTimeoutMs) ?? ''}`;
  const value = passed ? 1 : 0;
  return {
    score: { scorer: 'check', value, answer, extracted: null, target: null, explanation },
    metrics: { score: value, correct: value, ...toolMetrics },
    done: true,
  };
}

const sandbox: NodesetModule = {
  functions: { tools, check },
  evict: (episodeKey) => {
    usage.delete(episodeKey);
    pool.destroy(episodeKey);
  },
};

/** The pool of this process's sandboxes (tests look inside). */
export const sandboxPool = pool;
export { SANDBOX_WORKDIR };

export default sandbox;
