/** OpenAI `tool_calls` entries as the tool-running nodesets read them, with errors that name what is wrong. */
import { showValue } from '../../core/show-value.js';
import { BadInputError } from '../../errors.js';

/** One entry of OpenAI's `tool_calls`. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** Reads entry `i` of `tool_calls` (arguments given as an object are taken as their JSON). */
export function readToolCall(v: unknown, i: number): ToolCall {
  const c = v as Partial<ToolCall> | null;
  if (typeof c !== 'object' || c === null || typeof c.id !== 'string' || typeof c.function?.name !== 'string') {
    throw new BadInputError(`tool_calls[${i}] must be { id, type: "function", function: { name, arguments } }, got ${showValue(v)}`);
  }
  const args = c.function.arguments;
  return {
    id: c.id,
    type: 'function',
    function: { name: c.function.name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
  };
}

/** The call's arguments as an object, or a sentence saying why they are not one (the answer to the model). */
export function toolArguments(call: ToolCall): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.function.arguments || '{}');
  } catch {
    return `the arguments of ${call.function.name} are not valid JSON: ${showValue(call.function.arguments)}`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return `the arguments of ${call.function.name} must be a JSON object, got ${showValue(parsed)}`;
  }
  return parsed as Record<string, unknown>;
}
