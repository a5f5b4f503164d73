/** Reads numeric and boolean node config values, naming the key and the value when one is wrong. */

export function numberConfig(config: Record<string, unknown>, key: string, fallback: number): number {
  const v = config[key];
  if (v === undefined || v === null) return fallback;
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new Error(`config ${key} must be a number, got ${JSON.stringify(v)}`);
  return n;
}

/** An optional step number (e.g. `fail_at_step`): undefined when unset. */
export function optionalStepConfig(config: Record<string, unknown>, key: string): number | undefined {
  if (config[key] === undefined || config[key] === null) return undefined;
  const n = numberConfig(config, key, 0);
  if (!Number.isInteger(n) || n < 0) throw new Error(`config ${key} must be a step number ≥ 0, got ${JSON.stringify(config[key])}`);
  return n;
}

export function booleanConfig(config: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const v = config[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 1) return true;
  if (v === 'false' || v === 0) return false;
  throw new Error(`config ${key} must be true or false, got ${JSON.stringify(v)}`);
}
