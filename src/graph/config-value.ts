/**
 * Node config values against what a nodeset's manifest declares for each key: the `type`
 * (else the type of its `default`), for numbers `minimum`/`maximum`, and `enum`, the only values it takes. A wrong value is
 * refused when the graph is validated, before anything runs, instead of failing every episode.
 */
import type { ConfigKeySpec, ConfigValueType } from '../core/types.js';
import { showValue } from '../core/show-value.js';

/** The declared type of a config key: `type`, else that of its default; undefined when nothing says. */
export function declaredConfigType(decl: ConfigKeySpec): ConfigValueType | undefined {
  if (decl.type) return decl.type;
  const d = decl.default;
  if (typeof d === 'number') return 'number';
  if (typeof d === 'boolean') return 'boolean';
  if (typeof d === 'string') return 'string';
  if (Array.isArray(d)) return 'array';
  if (typeof d === 'object' && d !== null) return 'object';
  return undefined;
}

const isType: Record<ConfigValueType, (v: unknown) => boolean> = {
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => typeof v === 'number' && Number.isSafeInteger(v),
  boolean: (v) => typeof v === 'boolean',
  string: (v) => typeof v === 'string',
  array: (v) => Array.isArray(v),
  object: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
};

const ARTICLE: Record<ConfigValueType, string> = {
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  string: 'a string',
  array: 'an array',
  object: 'an object',
};

/** A value as a problem shows it: short JSON, cut past 60 characters (a value may be large). */

/** What is wrong with `value` for a key declared as `decl`, or undefined. null means "unset" and passes. */
export function configValueProblem(decl: ConfigKeySpec, value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (decl.enum)
    return decl.enum.includes(value as string)
      ? undefined
      : `must be one of ${decl.enum.map((v) => showValue(v)).join(', ')}, got ${showValue(value)}`;
  const type = declaredConfigType(decl);
  if (!type) return undefined;
  const numeric = type === 'number' || type === 'integer';
  const min = numeric ? decl.minimum : undefined;
  const max = numeric ? decl.maximum : undefined;
  const range =
    min !== undefined && max !== undefined ? ` in ${min}..${max}` : min !== undefined ? ` ≥ ${min}` : max !== undefined ? ` ≤ ${max}` : '';
  const ok = isType[type](value) && (min === undefined || (value as number) >= min) && (max === undefined || (value as number) <= max);
  return ok ? undefined : `must be ${ARTICLE[type]}${range}, got ${showValue(value)}`;
}
