/** GraphQL arguments without the fields left null (GraphQL's "not given"), so the schema fills in their defaults. */
export function withoutNulls<T extends object>(args: T): { [K in keyof T]?: Exclude<T[K], null> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) if (v !== null && v !== undefined) out[k] = v;
  return out as { [K in keyof T]?: Exclude<T[K], null> };
}
