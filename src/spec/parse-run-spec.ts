/**
 * The entry points of the run-spec schema: a submitted run (GraphQL input, CLI flags), a Live
 * Play request and a spec.json read back. Each error names the field (as the caller calls it:
 * `--workers` on the command line), what it must be and what it got.
 */
import type { z } from '../core/zod.js';
import { playInputSchema, runInputSchema, runSpecSchema, type PlayInput, type RunInput, type RunSpec } from './run-spec.js';
import { RunInputError, SpecInvalidError } from './spec-errors.js';
import { showValue } from '../core/show-value.js';

/** What a field is called where the input came from, e.g. `{ workerCount: '--workers' }`. */
export type FieldLabels = Partial<Record<string, string>>;

interface Problem {
  field: string;
  message: string;
  limit: number | undefined;
}

function fieldName(path: readonly PropertyKey[], labels: FieldLabels): string {
  const [head, ...rest] = path.map(String);
  if (head === undefined) return '(the input)';
  return [labels[head] ?? head, ...rest].join('.');
}

/** One problem per field (zod may report several for one value), in the order found. */
function problemsOf(error: z.ZodError, labels: FieldLabels): Problem[] {
  const out: Problem[] = [];
  const seen = new Set<string>();
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ field: key, message: `unknown field "${key}"`, limit: undefined });
      continue;
    }
    const field = fieldName(issue.path, labels);
    if (seen.has(field)) continue;
    seen.add(field);
    const input = (issue as { input?: unknown }).input;
    const params = issue.code === 'custom' ? (issue.params as { limit?: number; omitInput?: boolean } | undefined) : undefined;
    let message: string;
    if (input === undefined && issue.code === 'invalid_type') message = `${field} is required`;
    else if (params?.omitInput) message = `${field} ${issue.message}`;
    else message = `${field} ${issue.message}, got ${showValue(input)}`;
    out.push({ field: issue.path.map(String).join('.') || field, message, limit: params?.limit });
  }
  return out;
}

/** Checks `raw` with one of the spec schemas; BAD_USER_INPUT naming each field that is wrong. */
export function parseInput<S extends z.ZodType>(schema: S, raw: unknown, labels: FieldLabels): z.output<S> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new RunInputError(`the run input must be an object, got ${showValue(raw)}`, '');
  const result = schema.safeParse(raw, { reportInput: true });
  if (result.success) return result.data;
  const problems = problemsOf(result.error, labels);
  const first = problems[0]!;
  throw new RunInputError(problems.map((p) => p.message).join('; '), first.field, first.limit);
}

/** A submitted run, checked, with every default filled in. BAD_USER_INPUT naming the field otherwise. */
export function parseRunInput(raw: unknown, labels: FieldLabels = {}): RunInput {
  return parseInput(runInputSchema, raw, labels);
}

/** A Live Play request, checked. */
export function parsePlayInput(raw: unknown): PlayInput {
  return parseInput(playInputSchema, raw, {});
}

/** A spec.json read back; SPEC_INVALID naming the file and the field when it is not a valid spec. */
export function parseRunSpec(raw: unknown, source: string): RunSpec {
  const result = runSpecSchema.safeParse(raw, { reportInput: true });
  if (result.success) return result.data;
  const problems = problemsOf(result.error, {});
  throw new SpecInvalidError(`${source} is not a valid run spec: ${problems.map((p) => p.message).join('; ')}`, problems[0]!.field);
}
